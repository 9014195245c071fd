/*
** UTF-8 decoding, CJK classification and width folding for cjk_unicode61,
** plus the small growable buffer used by the other files.
**
** Folding follows Lucene's CJKWidthFilter: full-width ASCII U+FF01..FF5E
** becomes ASCII, half-width katakana U+FF65..FF9F becomes full-width
** katakana, and a half-width (semi-)voiced mark is composed into the kana
** before it when such a composed kana exists.  Half-width Hangul,
** U+FFE0..FFEE and the ideographic space are deliberately left alone.
*/
#include "internal.h"
SQLITE_EXTENSION_INIT3

#include <stdlib.h>
#include <string.h>

#include "cjk_script.h"

#define REPLACEMENT_CHAR 0xFFFD
#define FULLWIDTH_ASCII_FIRST 0xFF01
#define FULLWIDTH_ASCII_LAST 0xFF5E
#define FULLWIDTH_ASCII_DELTA 0xFEE0
#define HALFWIDTH_VOICED_MARK 0xFF9E
#define HALFWIDTH_SEMI_VOICED_MARK 0xFF9F

int hermes_utf8_decode(const unsigned char *z, int n, unsigned int *pCp) {
  unsigned int c = z[0];
  unsigned int min;
  int len;
  int i;

  if (c < 0x80) {
    *pCp = c;
    return 1;
  }
  /* C0/C1 and F5..FF can never start a valid sequence; 80..BF are stray
  ** continuation bytes.  All of them fall to the one-byte error case. */
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    c &= 0x1F;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    c &= 0x0F;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    c &= 0x07;
    min = 0x10000;
  } else {
    goto invalid;
  }
  if (len > n) goto invalid;
  for (i = 1; i < len; i++) {
    unsigned int b = z[i];
    if ((b & 0xC0) != 0x80) goto invalid;
    c = (c << 6) | (b & 0x3F);
  }
  /* Overlong forms would let one character hide behind several spellings. */
  if (c < min || c > 0x10FFFF) goto invalid;
  *pCp = c;
  return len;

invalid:
  /* Consuming exactly one byte guarantees forward progress on any input. */
  *pCp = REPLACEMENT_CHAR;
  return 1;
}

int hermes_fold_next(const unsigned char *z, int n, unsigned int *pCp, int *pbFolded) {
  unsigned int cp;
  int len = hermes_utf8_decode(z, n, &cp);

  *pbFolded = 0;
  if (cp < HERMES_KATAKANA_FIRST) {
    /* Fast path: ASCII, Latin, Han's neighbours below katakana never fold. */
    *pCp = cp;
    return len;
  }
  if (cp >= FULLWIDTH_ASCII_FIRST && cp <= FULLWIDTH_ASCII_LAST) {
    cp -= FULLWIDTH_ASCII_DELTA;
    *pbFolded = 1;
  } else if (cp >= HERMES_HALFWIDTH_FIRST && cp <= HERMES_HALFWIDTH_LAST) {
    cp = hermes_halfwidth_kana[cp - HERMES_HALFWIDTH_FIRST];
    *pbFolded = 1;
  }
  /* Compose "kana + half-width (semi-)voiced mark" into one kana (ｶﾞ -> ガ).
  ** Without a composition the mark is folded on its own, to the combining
  ** U+3099/U+309A, when the scan reaches it. */
  if (cp >= HERMES_KATAKANA_FIRST && cp <= HERMES_KATAKANA_LAST && len < n) {
    unsigned int next;
    int nextLen = hermes_utf8_decode(z + len, n - len, &next);
    unsigned int composed = 0;
    if (next == HALFWIDTH_VOICED_MARK) {
      composed = hermes_kana_voiced[cp - HERMES_KATAKANA_FIRST];
    } else if (next == HALFWIDTH_SEMI_VOICED_MARK) {
      composed = hermes_kana_semivoiced[cp - HERMES_KATAKANA_FIRST];
    }
    if (composed) {
      cp = composed;
      len += nextLen;
      *pbFolded = 1;
    }
  }
  *pCp = cp;
  return len;
}

int hermes_is_cjk(unsigned int cp) {
  int lo = 0;
  int hi = HERMES_CJK_NRANGES - 1;
  if (cp < HERMES_CJK_MIN) return 0;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (cp < hermes_cjk_ranges[mid][0]) {
      hi = mid - 1;
    } else if (cp > hermes_cjk_ranges[mid][1]) {
      lo = mid + 1;
    } else {
      return 1;
    }
  }
  return 0;
}

int hermes_utf8_encode(unsigned int cp, char *z) {
  unsigned char *u = (unsigned char *)z;
  if (cp < 0x80) {
    u[0] = (unsigned char)cp;
    return 1;
  }
  if (cp < 0x800) {
    u[0] = (unsigned char)(0xC0 | (cp >> 6));
    u[1] = (unsigned char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    u[0] = (unsigned char)(0xE0 | (cp >> 12));
    u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    u[2] = (unsigned char)(0x80 | (cp & 0x3F));
    return 3;
  }
  u[0] = (unsigned char)(0xF0 | ((cp >> 18) & 0x07));
  u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
  u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
  u[3] = (unsigned char)(0x80 | (cp & 0x3F));
  return 4;
}

int hermes_buf_reserve(HBuf *p, size_t nExtra) {
  size_t nNeed;
  size_t nNew;
  char *aNew;
  if (p->oom) return SQLITE_NOMEM;
  nNeed = p->n + nExtra;
  if (nNeed < p->n) goto oom; /* size_t overflow */
  if (nNeed <= p->nAlloc) return SQLITE_OK;
  /* Doubling keeps appends amortised O(1), so megabyte outputs stay linear. */
  nNew = p->nAlloc ? p->nAlloc : 64;
  while (nNew < nNeed) {
    if (nNew > ((size_t)-1) / 2) {
      nNew = nNeed;
      break;
    }
    nNew *= 2;
  }
  aNew = (char *)realloc(p->a, nNew);
  if (aNew == NULL) goto oom;
  p->a = aNew;
  p->nAlloc = nNew;
  return SQLITE_OK;

oom:
  p->oom = 1;
  return SQLITE_NOMEM;
}

void hermes_buf_append(HBuf *p, const char *z, size_t n) {
  if (n == 0) return;
  if (hermes_buf_reserve(p, n) != SQLITE_OK) return;
  memcpy(p->a + p->n, z, n);
  p->n += n;
}

void hermes_buf_free(HBuf *p) {
  free(p->a);
  memset(p, 0, sizeof(*p));
}
