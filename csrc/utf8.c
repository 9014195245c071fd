/*
** The UTF-8 codec of cjk_unicode61: a lenient decoder that always makes
** progress on invalid input, and an encoder for folded code points.
*/
#include "internal.h"
SQLITE_EXTENSION_INIT3

#define REPLACEMENT_CHAR 0xFFFD

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
