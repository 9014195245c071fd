/*
** A growable byte buffer on SQLite's allocator, for building result text.
**
** Memory comes from sqlite3_realloc64 so that a finished buffer can be handed
** to SQLite as a result with sqlite3_free as its destructor, without a copy.
*/
#include "internal.h"
SQLITE_EXTENSION_INIT3

#include <limits.h>
#include <string.h>

/* First allocation; doubling from here keeps appends amortised O(1). */
#define HBUF_INITIAL 64

int hermes_buf_reserve(HBuf *p, size_t nExtra) {
  size_t nNeed;
  size_t nNew;
  char *aNew;
  if (p->oom) return SQLITE_NOMEM;
  nNeed = p->n + nExtra;
  if (nNeed < p->n) goto oom; /* size_t overflow */
  if (nNeed <= p->nAlloc) return SQLITE_OK;
  nNew = p->nAlloc ? p->nAlloc : HBUF_INITIAL;
  while (nNew < nNeed) {
    if (nNew > ((size_t)-1) / 2) {
      nNew = nNeed;
      break;
    }
    nNew *= 2;
  }
  aNew = (char *)sqlite3_realloc64(p->a, (sqlite3_uint64)nNew);
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

void hermes_buf_result_text(HBuf *p, sqlite3_context *ctx) {
  if (p->oom) {
    sqlite3_result_error_nomem(ctx);
  } else if (p->n > (size_t)INT_MAX) {
    sqlite3_result_error_toobig(ctx);
  } else if (p->a == NULL) {
    sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
  } else {
    /* Ownership passes to SQLite, which frees it with sqlite3_free (also
    ** when the result is rejected, e.g. as too big for SQLITE_LIMIT_LENGTH). */
    sqlite3_result_text(ctx, p->a, (int)p->n, sqlite3_free);
    p->a = NULL;
  }
  hermes_buf_free(p);
}

void hermes_buf_free(HBuf *p) {
  sqlite3_free(p->a);
  memset(p, 0, sizeof(*p));
}
