/*
** Han variant folding for cjk_unicode61 ("variants 1") and cjk_fold()
** (fold.c).
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
