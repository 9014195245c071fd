/*
** Shared declarations of the cjk_unicode61 loadable extension.
**
** Every .c file includes sqlite3ext.h through this header.  Exactly one file
** (extension.c) defines the sqlite3_api pointer with SQLITE_EXTENSION_INIT1;
** the others declare it with SQLITE_EXTENSION_INIT3.  That pointer is the
** only global mutable state in the library: SQLite's loadable-extension ABI
** requires it.  All memory comes from sqlite3_malloc64/sqlite3_realloc64 and
** goes back with sqlite3_free, so the host's allocator and its limits apply.
*/
#ifndef HERMES_INTERNAL_H
#define HERMES_INTERNAL_H

#include <stddef.h>
#include <sqlite3ext.h>

#include "hermes_fts.h"

/* Build against any SQLite >= 3.26 header set (manylinux ships 3.26); the
** flag below arrived in 3.31, and the supported runtime minimum is 3.34. */
#ifndef SQLITE_INNOCUOUS
#define SQLITE_INNOCUOUS 0x000200000
#endif

/* The version lives only in hermes_fts/_version.py; every build passes it as
** -DHERMES_FTS_VERSION=X.Y.Z (unquoted, so no shell or MSVC quoting rules
** get in the way) and it is turned into a string here. */
#ifndef HERMES_FTS_VERSION
#error "HERMES_FTS_VERSION is not defined: build through setup.py or csrc/build_config.py"
#endif
#define HERMES_STRINGIFY_(x) #x
#define HERMES_STRINGIFY(x) HERMES_STRINGIFY_(x)
#define HERMES_FTS_VERSION_STRING HERMES_STRINGIFY(HERMES_FTS_VERSION)

/* The name our own tables use: in hermes-fts' namespace, so a Hermes build that
** registers its own "cjk_unicode61" can never tokenize them. */
#define HERMES_TOKENIZER_NAME "hermes_fts_cjk"
/* The public name, for standalone use; registered only where no library has
** registered it on the connection already (one tokenizer per name). */
#define HERMES_PUBLIC_TOKENIZER_NAME "cjk_unicode61"
/* The first characters of glue marks ("glue 1", tokenizer.c): U+E000..E004,
** private use, so unicode61 token characters that text almost never holds. */
#define HERMES_MARK_WORD "\xEE\x80\x80"
#define HERMES_MARK_LEFT "\xEE\x80\x81"
#define HERMES_MARK_RIGHT "\xEE\x80\x82"
#define HERMES_MARK_WIDTH "\xEE\x80\x83"
#define HERMES_MARK_JOIN "\xEE\x80\x84"

/* ---- UTF-8 codec (utf8.c) ------------------------------------------------ */

/* Decode one code point at z[0..n) (n >= 1) leniently and return the number
** of bytes it occupies (always >= 1, so every scan terminates).  An invalid
** lead byte, a truncated or overlong sequence, or a value above U+10FFFF is
** one code point (U+FFFD) consuming one byte.  Encoded surrogates decode as
** themselves (non-CJK). */
int hermes_utf8_decode(const unsigned char *z, int n, unsigned int *pCp);

/* Write cp as UTF-8 into z (room for 4 bytes); return the byte count. */
int hermes_utf8_encode(unsigned int cp, char *z);

/* ---- what the tokenizer calls a character (chars.c) --------------------- */

/* Like hermes_utf8_decode, then width-folded (full-width ASCII -> ASCII,
** half-width katakana -> full-width).  A following half-width (semi-)voiced
** mark is composed into a preceding katakana when a composition exists, and
** then counts as part of this character.  With HERMES_FOLD_COMPOSE in flags
** ("compose 1"), so does what NFC composes into it (marks, Hangul jamo, a
** kana's combining voiced mark); with HERMES_FOLD_LETTERS ("letters 1") a
** letter folds to the letter without its marks (ά -> α, ё -> е) and the Hebrew
** points and Arabic harakat after it count as part of it, dropped.
** *pbFolded is set when the folded code point differs from the decoded text. */
int hermes_fold_next(const unsigned char *z, int n, unsigned int *pCp, int *pbFolded,
                     int flags);
/* The ASCII letters of a Latin ligature ("letters 1": ﬁ -> fi) into out (room
** for 3), their count; 0 when cp is none.  hermes_fold_next leaves the code
** point and marks it folded; whoever writes the folded text writes these. */
int hermes_ligature_letters(unsigned int cp, char *out);
#define HERMES_FOLD_COMPOSE 1
#define HERMES_FOLD_LETTERS 2
#define HERMES_FOLD_ALL (HERMES_FOLD_COMPOSE | HERMES_FOLD_LETTERS)

/* The lowest UTF-8 lead byte of a character that joins the one before it
** (U+0300, CC 80): a lower byte lets a scan skip composing and dropping. */
#define HERMES_COMPOSE_LEAD_MIN 0xCC

/* Katakana cp folded to the hiragana of the same name ("kana 1"); any other
** cp unchanged.  Kana to kana: run boundaries and byte lengths never move. */
unsigned int hermes_kana_fold(unsigned int cp);

/* True when cp (already folded) belongs to a CJK run. */
int hermes_is_cjk(unsigned int cp);

/* The bytes of the variation selectors (VS1..VS16, VS17..VS256) at the start
** of z[0..n): after a CJK character they pick its glyph, never another word,
** so "selectors 1" and cjk_fold() read them as part of it. */
int hermes_selectors_at(const unsigned char *z, int n);

/* True when cp is a symbol, punctuation, space or format character newer
** than unicode61's Unicode 6.1 tables, which read it as a letter
** (csrc/cjk_script.h hermes_late_symbols): a separator under "symbols 1". */
int hermes_is_late_symbol(unsigned int cp);

/* Whether the code point k of z (aChar: each code point's byte offset, n at
** the end) is drawn with the one before it, as one character a reader sees:
** a combining mark, a joiner or what follows one, a variation selector, a skin
** tone, a Hangul vowel or final jamo, a flag's second regional indicator.  A
** snippet's edge never falls there (hermes_fts/_display.py reads text alike). */
int hermes_inside_char(const unsigned char *z, int n, const int *aChar, int k);
/* Byte offset i (a code point boundary of z[0..n)) moved past what is drawn
** with the code point before it (marks, joiners, selectors, skin tones), so a
** highlight ending there keeps its character whole.  A token never ends
** inside a flag, so regional indicators are not paired here. */
int hermes_char_end(const unsigned char *z, int n, int i);

/* ---- a growable byte buffer on SQLite's allocator (buffer.c) ------------ */

typedef struct HBuf {
  char *a;        /* sqlite3_malloc64'd bytes, not NUL-terminated */
  size_t n;       /* bytes used */
  size_t nAlloc;  /* bytes allocated */
  int oom;        /* set once an allocation failed; later appends are no-ops */
} HBuf;

/* Make room for nExtra more bytes; SQLITE_NOMEM (and oom set) on failure. */
int hermes_buf_reserve(HBuf *p, size_t nExtra);
/* Append z[0..n); on failure nothing is appended and oom is set. */
void hermes_buf_append(HBuf *p, const char *z, size_t n);
/* Hand the bytes to SQLite as the text result of ctx (or report NOMEM /
** TOOBIG) and leave the buffer empty. */
void hermes_buf_result_text(HBuf *p, sqlite3_context *ctx);
void hermes_buf_free(HBuf *p);

/* ---- what extension.c registers ----------------------------------------- */

/* The tokenizer; its xCreate expects the connection's fts5_api as context. */
extern const fts5_tokenizer hermes_cjk_tokenizer;

/* FTS5 auxiliary functions (highlight.c). */
void hermes_cjk_highlight(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                          int nVal, sqlite3_value **apVal);
void hermes_cjk_snippet(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                        int nVal, sqlite3_value **apVal);
/* Whether cjk_snippet's column and max_chars (apVal[0], apVal[4]) are valid;
** if not, the error, named after zFunc, is set on ctx and 0 returned. */
int hermes_snippet_args_ok(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                           sqlite3_value **apVal, const char *zFunc);

/* FTS5 auxiliary function (rare_snippet.c): a rare phrase's snippet, in the
** ranking pass. */
void hermes_cjk_few_snippet(const Fts5ExtensionApi *pApi, Fts5Context *pFts,
                            sqlite3_context *ctx, int nVal, sqlite3_value **apVal);

/* FTS5 auxiliary functions (row_evidence.c): the query's phrases the row
** holds, one bit each; the row's bm25 with statistics the caller gives; one
** phrase's saturation with row sizes the caller gives. */
void hermes_fts_held(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                     int nVal, sqlite3_value **apVal);
void hermes_fts_bm25(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                     int nVal, sqlite3_value **apVal);
void hermes_fts_saturation(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *ctx,
                           int nVal, sqlite3_value **apVal);
/* Aggregate SQL function (row_evidence.c): one token's rank bounds per block. */
void hermes_fts_block_peaks_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void hermes_fts_block_peaks_final(sqlite3_context *ctx);

/* Scalar SQL functions (sql_functions.c); the cjk_tokens pair expects the
** connection's fts5_api as user data. */
void hermes_cjk_tokens(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void hermes_cjk_tokens_query(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void hermes_cjk_version(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* What cjk_unicode61_version() answers, from sqlite3_mprintf (NULL: no memory). */
char *hermes_version_text(void);

/* Scalar SQL functions (fold.c): cjk_fold(text), the tokenizer's character
** folds (width, kana, Han variants) for the LIKE route; cjk_fold_find(text,
** key), where the folded key first occurs in the folded text, counted in
** characters of text (-1: nowhere).  Invalid UTF-8 is copied unchanged; NULL
** gives NULL. */
void hermes_cjk_fold(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void hermes_cjk_fold_find(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#endif /* HERMES_INTERNAL_H */
