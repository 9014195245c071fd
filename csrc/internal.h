/*
** Shared declarations of the cjk_unicode61 loadable extension.
**
** Every .c file includes sqlite3ext.h through this header.  Exactly one file
** (cjk_unicode61.c) defines the sqlite3_api pointer with
** SQLITE_EXTENSION_INIT1; the others declare it with SQLITE_EXTENSION_INIT3.
** That pointer is the only global mutable state in the library: SQLite's
** loadable-extension ABI requires it.
*/
#ifndef HERMES_INTERNAL_H
#define HERMES_INTERNAL_H

#include <stddef.h>
#include <sqlite3ext.h>

/* Build against any SQLite >= 3.26 header set (manylinux ships 3.26); the
** flag below arrived in 3.31, and the supported runtime minimum is 3.34. */
#ifndef SQLITE_INNOCUOUS
#define SQLITE_INNOCUOUS 0x000200000
#endif

#define HERMES_FTS_VERSION "0.1.0"
#define HERMES_TOKENIZER_NAME "cjk_unicode61"

/* Entry points are the only symbols with default visibility; the build uses
** -fvisibility=hidden for everything else. */
#if defined(_WIN32)
#define HERMES_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define HERMES_EXPORT __attribute__((visibility("default")))
#else
#define HERMES_EXPORT
#endif

/* ---- UTF-8, classification and width folding (width.c) ------------------ */

/* Decode one code point at z[0..n) (n >= 1) leniently and return the number
** of bytes it occupies (always >= 1, so every scan terminates).  An invalid
** lead byte, a truncated or overlong sequence, or a value above U+10FFFF is
** one code point (U+FFFD) consuming one byte.  Encoded surrogates decode as
** themselves (non-CJK). */
int hermes_utf8_decode(const unsigned char *z, int n, unsigned int *pCp);

/* Like hermes_utf8_decode, then width-folded (full-width ASCII -> ASCII,
** half-width katakana -> full-width).  A following half-width (semi-)voiced
** mark is composed into a preceding katakana when a composition exists, and
** then counts as part of this character.  *pbFolded is set when the folded
** code point differs from the decoded text. */
int hermes_fold_next(const unsigned char *z, int n, unsigned int *pCp, int *pbFolded);

/* True when cp (already folded) belongs to a CJK run. */
int hermes_is_cjk(unsigned int cp);

/* Write cp as UTF-8 into z (room for 4 bytes); return the byte count. */
int hermes_utf8_encode(unsigned int cp, char *z);

/* ---- a growable byte buffer (libc malloc; width.c) ---------------------- */

typedef struct HBuf {
  char *a;        /* malloc'd bytes, not NUL-terminated unless asked */
  size_t n;       /* bytes used */
  size_t nAlloc;  /* bytes allocated */
  int oom;        /* set once an allocation failed; later appends are no-ops */
} HBuf;

int hermes_buf_reserve(HBuf *p, size_t nExtra);
void hermes_buf_append(HBuf *p, const char *z, size_t n);
void hermes_buf_free(HBuf *p);

/* ---- registration (one per source file) --------------------------------- */

int hermes_register_tokenizer(fts5_api *pApi);
int hermes_register_aux(fts5_api *pApi);
int hermes_register_sql_functions(sqlite3 *db, fts5_api *pApi);

#endif /* HERMES_INTERNAL_H */
