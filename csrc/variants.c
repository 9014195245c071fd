/*
** Han variant folding for cjk_unicode61 ("variants 1") and cjk_fold().
**
** A fold maps one Han character to one canonical Han character (Traditional
** -> Simplified, Japanese shinjitai/kyujitai -> the shared form,
** compatibility ideograph -> unified ideograph), so it changes token text
** only: byte offsets, positions and run boundaries stay those of the
** original text, and highlights still mark the characters as written.
*/
#include "variants.h"
SQLITE_EXTENSION_INIT3

#include "cjk_variants.h"

unsigned int hermes_variant_fold(unsigned int cp) {
  int lo = 0;
  int hi = HERMES_VARIANT_NFOLDS - 1;
  if (cp < HERMES_VARIANT_MIN) return cp; /* ASCII, kana: never folded */
  if (cp < 0x10000) {
    unsigned int bit = cp - HERMES_VARIANT_BITMAP_BASE;
    if ((hermes_variant_bitmap[bit >> 5] & (1u << (bit & 31))) == 0) return cp;
  }
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (cp < hermes_variant_folds[mid][0]) {
      hi = mid - 1;
    } else if (cp > hermes_variant_folds[mid][0]) {
      lo = mid + 1;
    } else {
      return hermes_variant_folds[mid][1];
    }
  }
  return cp;
}

void hermes_cjk_fold(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  const unsigned char *z;
  int n;
  int i = 0;
  sqlite3_uint64 nOut = 0;
  sqlite3_uint64 nAlloc;
  char *zOut;

  if (argc != 1) {
    sqlite3_result_error(ctx, "cjk_fold: expected (text)", -1);
    return;
  }
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  z = sqlite3_value_text(argv[0]);
  n = sqlite3_value_bytes(argv[0]);
  if (z == NULL) {
    if (n > 0) {
      sqlite3_result_error_nomem(ctx); /* the conversion to text failed */
    } else {
      sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
    }
    return;
  }
  /* A character grows by at most one byte (3-byte Han -> 4-byte Han in the
  ** supplementary planes); width folding only shrinks.  So n + n/3 + 1. */
  nAlloc = (sqlite3_uint64)n + (sqlite3_uint64)n / 3 + 1;
  zOut = (char *)sqlite3_malloc64(nAlloc);
  if (zOut == NULL) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  while (i < n) {
    unsigned int cp;
    unsigned int folded;
    int bWidth;
    int len;
    if (z[i] < 0x80) {
      zOut[nOut++] = (char)z[i++];
      continue;
    }
    len = hermes_fold_next(z + i, n - i, &cp, &bWidth);
    folded = hermes_variant_fold(cp);
    if (bWidth || folded != cp) {
      nOut += (sqlite3_uint64)hermes_utf8_encode(folded, zOut + nOut);
    } else {
      /* Verbatim, invalid bytes included: the text compares as before. */
      int k;
      for (k = 0; k < len; k++) zOut[nOut++] = (char)z[i + k];
    }
    i += len;
  }
  /* sqlite3_result_text64 frees zOut itself and reports TOOBIG if needed. */
  sqlite3_result_text64(ctx, zOut, nOut, sqlite3_free, SQLITE_UTF8);
}
