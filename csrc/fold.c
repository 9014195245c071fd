/*
** The tokenizer's character folds as SQL functions, for the routes that read
** raw text (the LIKE scan, its snippets):
**   cjk_fold(text)           text with width, kana and Han variant folds applied
**   cjk_fold_find(text, key) where cjk_fold(key) first occurs in cjk_fold(text),
**                            in characters of text; -1 when it does not
** Every fold maps a character to one character, except that width folding
** joins a half-width kana and its voiced mark, composing ("compose 1", on
** here) joins a letter and what NFC composes into it, and "letters 1" (on
** here) folds letters (ά -> α, ё -> е) and drops the Hebrew points and
** Arabic harakat after one, and the variation selectors after a CJK
** character are dropped ("selectors 1"); cjk_fold_find counts the original
** characters, so its answer indexes the text as written.  A NUL folds to a space: the
** tokenizer reads a column past a NUL, and LIKE, reading a C string, stopped
** there, so a pending row's words after one were never found.
*/
#include "internal.h"
#include "variants.h"
SQLITE_EXTENSION_INIT3

/* The folded bytes of the character at z[0..n) (n >= 1) into out (room for
** 4); *pnIn = bytes of z it covers.  Bytes no fold changes are copied
** verbatim, invalid ones included, so unfolded text compares as before. */
static int foldChar(const unsigned char *z, int n, char *out, int *pnIn) {
  unsigned int cp;
  unsigned int folded;
  int bWidth;
  int len;
  int k;
  if (z[0] == 0) { /* a separator to the tokenizer; the end of the text to LIKE */
    out[0] = ' ';
    *pnIn = 1;
    return 1;
  }
  /* ASCII that no mark (U+0300..) follows is itself. */
  if (z[0] < 0x80 && (n == 1 || z[1] < HERMES_COMPOSE_LEAD_MIN)) {
    out[0] = (char)z[0];
    *pnIn = 1;
    return 1;
  }
  len = hermes_fold_next(z, n, &cp, &bWidth, HERMES_FOLD_ALL);
  folded = hermes_variant_fold(hermes_kana_fold(cp));
  /* Variation selectors after a CJK character go with it, as "selectors 1"
  ** reads them: 葛 VS17 飾 folds to 葛飾. */
  *pnIn = hermes_is_cjk(cp) ? len + hermes_selectors_at(z + len, n - len) : len;
  if ((k = hermes_ligature_letters(cp, out)) > 0) return k;
  if (bWidth || folded != cp || *pnIn != len) return hermes_utf8_encode(folded, out);
  for (k = 0; k < len && k < 4; k++) out[k] = (char)z[k]; /* unfolded: len <= 4 */
  return k;
}

/* The text of argv[i], or NULL when it is SQL NULL or could not be had (an
** error is then set on ctx unless the value was NULL). */
static const unsigned char *textArg(sqlite3_context *ctx, sqlite3_value *v, int *pn) {
  const unsigned char *z;
  if (sqlite3_value_type(v) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return NULL;
  }
  z = sqlite3_value_text(v);
  *pn = sqlite3_value_bytes(v);
  if (z == NULL) {
    if (*pn > 0) {
      sqlite3_result_error_nomem(ctx); /* the conversion to text failed */
    } else {
      z = (const unsigned char *)""; /* a zero-length blob */
    }
  }
  return z;
}

void hermes_cjk_fold(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  const unsigned char *z;
  int n = 0;
  int i = 0;
  sqlite3_uint64 nOut = 0;
  char *zOut;

  if (argc != 1) {
    sqlite3_result_error(ctx, "cjk_fold: expected (text)", -1);
    return;
  }
  if ((z = textArg(ctx, argv[0], &n)) == NULL) return;
  /* A character grows by at most one byte (3-byte Han -> 4-byte Han in the
  ** supplementary planes); width folding and composing only shrink.  So n + n/3 + 1,
  ** plus 4 so the last character always has room. */
  zOut = (char *)sqlite3_malloc64((sqlite3_uint64)n + (sqlite3_uint64)n / 3 + 5);
  if (zOut == NULL) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  while (i < n) {
    int len;
    nOut += (sqlite3_uint64)foldChar(z + i, n - i, zOut + nOut, &len);
    i += len;
  }
  /* sqlite3_result_text64 frees zOut itself and reports TOOBIG if needed. */
  sqlite3_result_text64(ctx, zOut, nOut, sqlite3_free, SQLITE_UTF8);
}

/* Code points in z[0..n) as the decoder reads them (an invalid byte is one). */
static sqlite3_int64 countChars(const unsigned char *z, int n) {
  sqlite3_int64 nChar = 0;
  int i = 0;
  while (i < n) {
    unsigned int cp;
    i += hermes_utf8_decode(z + i, n - i, &cp);
    nChar++;
  }
  return nChar;
}

/* Folded byte offset of the first occurrence of key[0..nKey) in the folded
** text, or -1.  Knuth-Morris-Pratt over the folded bytes as they are made:
** nothing past the hit is read and no folded copy is kept. */
static sqlite3_int64 findFolded(const unsigned char *z, int n, const char *key, int nKey,
                                const int *aFail) {
  sqlite3_int64 nFolded = 0;
  int q = 0; /* bytes of key matched so far */
  int i = 0;
  while (i < n) {
    char buf[4];
    int len;
    int nBuf = foldChar(z + i, n - i, buf, &len);
    int k;
    for (k = 0; k < nBuf; k++) {
      while (q > 0 && key[q] != buf[k]) q = aFail[q - 1];
      if (key[q] == buf[k]) q++;
      if (q == nKey) return nFolded + k + 1 - nKey;
    }
    nFolded += nBuf;
    i += len;
  }
  return -1;
}

/* The character of z holding folded byte offset iFolded, counted in original
** characters. */
static sqlite3_int64 originalChar(const unsigned char *z, int n, sqlite3_int64 iFolded) {
  sqlite3_int64 nFolded = 0;
  sqlite3_int64 nChar = 0;
  int i = 0;
  while (i < n) {
    char buf[4];
    int len;
    int nBuf = foldChar(z + i, n - i, buf, &len);
    if (nFolded + nBuf > iFolded) break;
    nFolded += nBuf;
    nChar += countChars(z + i, len);
    i += len;
  }
  return nChar;
}

void hermes_cjk_fold_find(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  const unsigned char *z;
  const unsigned char *zKey;
  int n = 0;
  int nKey = 0;
  int i = 0;
  int q = 0;
  int *aFail;
  HBuf key = {0};
  sqlite3_int64 iFolded;

  if (argc != 2) {
    sqlite3_result_error(ctx, "cjk_fold_find: expected (text, key)", -1);
    return;
  }
  if ((z = textArg(ctx, argv[0], &n)) == NULL) return;
  if ((zKey = textArg(ctx, argv[1], &nKey)) == NULL) return;
  while (i < nKey) {
    char buf[4];
    int len;
    hermes_buf_append(&key, buf, (size_t)foldChar(zKey + i, nKey - i, buf, &len));
    i += len;
  }
  if (key.oom) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (key.n == 0) { /* the empty key is everywhere, as in str.find */
    sqlite3_result_int64(ctx, 0);
    return;
  }
  /* aFail[j]: the longest proper border of key[0..j] (KMP's failure table). */
  aFail = (int *)sqlite3_malloc64(sizeof(int) * (sqlite3_uint64)key.n);
  if (aFail == NULL) {
    hermes_buf_free(&key);
    sqlite3_result_error_nomem(ctx);
    return;
  }
  aFail[0] = 0;
  for (i = 1; i < (int)key.n; i++) {
    while (q > 0 && key.a[q] != key.a[i]) q = aFail[q - 1];
    if (key.a[q] == key.a[i]) q++;
    aFail[i] = q;
  }
  iFolded = findFolded(z, n, key.a, (int)key.n, aFail);
  sqlite3_result_int64(ctx, iFolded < 0 ? -1 : originalChar(z, n, iFolded));
  sqlite3_free(aFail);
  hermes_buf_free(&key);
}
