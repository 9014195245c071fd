/*
** A stand-in for Hermes Agent's own libfts5_cjk, for tests only.
**
** Newer Hermes builds load a tokenizer named "cjk_unicode61" from
** $HERMES_HOME/lib/libfts5_cjk.so, built from a C file no Hermes package
** ships.  This file gives the tests a library that behaves as Hermes
** documents its tokenizer (unicode61's tokens; inside them every run of CJK
** characters becomes overlapping two-character tokens, a run of one stays one
** token) and nothing more: no width folding, no variant folding, no options of
** its own.  So it tokenizes some text differently from hermes-fts, as Hermes'
** real library does, and a test can tell the two apart.
**
** Build: cc -shared -fPIC -O2 hermes_cjk_standin.c -o libfts5_cjk.so
** SQLite derives the entry point sqlite3_ftscjk_init from that file name.
*/
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include <string.h>

static int standin_is_cjk(unsigned int c) {
  return (c >= 0x1100 && c <= 0x11FF) || (c >= 0x3040 && c <= 0x30FF) ||
         (c >= 0x3130 && c <= 0x318F) || (c >= 0x31F0 && c <= 0x31FF) ||
         (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
         (c >= 0xA960 && c <= 0xA97F) || (c >= 0xAC00 && c <= 0xD7A3) ||
         (c >= 0xD7B0 && c <= 0xD7FF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0x20000 && c <= 0x2FA1F);
}

/* Length in bytes of the UTF-8 character at z (n bytes left), its code point in *pc. */
static int standin_char(const unsigned char *z, int n, unsigned int *pc) {
  int len = 1;
  unsigned int c = z[0];
  if (c >= 0xF0 && n >= 4) {
    len = 4;
    c &= 0x07;
  } else if (c >= 0xE0 && n >= 3) {
    len = 3;
    c &= 0x0F;
  } else if (c >= 0xC0 && n >= 2) {
    len = 2;
    c &= 0x1F;
  } else {
    *pc = c;
    return 1;
  }
  for (int i = 1; i < len; i++) c = (c << 6) | (z[i] & 0x3F);
  *pc = c;
  return len;
}

typedef struct {
  fts5_tokenizer inner;
  Fts5Tokenizer *pInner;
} Standin;

typedef struct {
  void *pCtx;
  int (*xToken)(void *, int, const char *, int, int, int);
} StandinCall;

/* One token from unicode61: pass it on, or split its CJK runs into pairs. */
static int standin_token(void *pArg, int tflags, const char *pTok, int nTok, int iStart,
                         int iEnd) {
  StandinCall *call = (StandinCall *)pArg;
  const unsigned char *z = (const unsigned char *)pTok;
  int rc = SQLITE_OK, i = 0;
  (void)iEnd;
  while (i < nTok && rc == SQLITE_OK) {
    unsigned int c;
    int start = i, len = standin_char(z + i, nTok - i, &c);
    int cjk = standin_is_cjk(c);
    if (!cjk) {
      i += len;
      while (i < nTok) {
        int l = standin_char(z + i, nTok - i, &c);
        if (standin_is_cjk(c)) break;
        i += l;
      }
      rc = call->xToken(call->pCtx, tflags, pTok + start, i - start, iStart + start,
                        iStart + i);
      continue;
    }
    /* A CJK run: prev..here is one character, each next one closes a pair. */
    int prev = start, here = start + len, pairs = 0;
    i = here;
    while (i < nTok && rc == SQLITE_OK) {
      int l = standin_char(z + i, nTok - i, &c);
      if (!standin_is_cjk(c)) break;
      i += l;
      rc = call->xToken(call->pCtx, tflags, pTok + prev, i - prev, iStart + prev, iStart + i);
      pairs++;
      prev = here;
      here = i;
    }
    if (rc == SQLITE_OK && pairs == 0) {
      rc = call->xToken(call->pCtx, tflags, pTok + start, here - start, iStart + start,
                        iStart + here);
    }
  }
  return rc;
}

static int standin_create(void *pCtx, const char **azArg, int nArg, Fts5Tokenizer **ppOut) {
  fts5_api *api = (fts5_api *)pCtx;
  void *innerCtx = 0;
  Standin *p = sqlite3_malloc(sizeof(*p));
  if (p == 0) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  int rc = api->xFindTokenizer(api, "unicode61", &innerCtx, &p->inner);
  if (rc == SQLITE_OK) rc = p->inner.xCreate(innerCtx, azArg, nArg, &p->pInner);
  if (rc != SQLITE_OK) {
    sqlite3_free(p);
    return rc;
  }
  *ppOut = (Fts5Tokenizer *)p;
  return SQLITE_OK;
}

static void standin_delete(Fts5Tokenizer *pTok) {
  Standin *p = (Standin *)pTok;
  if (p->pInner) p->inner.xDelete(p->pInner);
  sqlite3_free(p);
}

static int standin_tokenize(Fts5Tokenizer *pTok, void *pCtx, int flags, const char *pText,
                            int nText,
                            int (*xToken)(void *, int, const char *, int, int, int)) {
  Standin *p = (Standin *)pTok;
  StandinCall call = {pCtx, xToken};
  return p->inner.xTokenize(p->pInner, &call, flags, pText, nText, standin_token);
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_ftscjk_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  static fts5_tokenizer methods = {standin_create, standin_delete, standin_tokenize};
  fts5_api *api = 0;
  sqlite3_stmt *stmt = 0;
  SQLITE_EXTENSION_INIT2(pApi);
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, 0) == SQLITE_OK) {
    sqlite3_bind_pointer(stmt, 1, (void *)&api, "fts5_api_ptr", 0);
    sqlite3_step(stmt);
  }
  sqlite3_finalize(stmt);
  if (api == 0) {
    *pzErrMsg = sqlite3_mprintf("hermes_cjk_standin: FTS5 is not available");
    return SQLITE_ERROR;
  }
  return api->xCreateTokenizer(api, "cjk_unicode61", (void *)api, &methods, 0);
}
