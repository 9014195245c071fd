/*
** Scalar SQL functions for people in the sqlite3 shell and for the Python
** loader:
**   cjk_tokens(text [, tokenizer args...])        document tokenization
**   cjk_tokens_query(text [, tokenizer args...])  query tokenization
**     -> JSON array of {"token","start","end","pos","colocated"}
**   cjk_unicode61_version() -> "hermes-fts X; fts5 api v1; sqlite Y"
** The fts5_api of the connection is the functions' user data, so the exact
** tokenizer registered on that connection is used.
*/
#include "internal.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

typedef struct JsonTokens {
  HBuf out;
  int nToken; /* tokens written so far (for the comma) */
  int iPos;   /* next FTS5 position */
} JsonTokens;

/* Append the character at z[0..n) (n >= 1) when it is valid UTF-8, else
** U+FFFD (for an invalid byte, and for an encoded surrogate); returns the
** bytes of z it covers. */
static int appendValidChar(HBuf *b, const unsigned char *z, int n) {
  unsigned int cp;
  int len = hermes_utf8_decode(z, n, &cp);
  if ((len == 1 && z[0] >= 0x80) || (cp >= 0xD800 && cp <= 0xDFFF)) {
    hermes_buf_append(b, "\xEF\xBF\xBD", 3);
  } else {
    hermes_buf_append(b, (const char *)z, (size_t)len);
  }
  return len;
}

/* Append z[0..n) as a JSON string.  Control characters are escaped as
** \u00XX; bytes that are not valid UTF-8 become U+FFFD, so the output is
** always valid JSON, whatever the input. */
static void jsonString(HBuf *b, const char *zIn, int n) {
  const unsigned char *z = (const unsigned char *)zIn;
  int i = 0;
  hermes_buf_append(b, "\"", 1);
  while (i < n) {
    unsigned int c = z[i];
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      hermes_buf_append(b, esc, 2);
      i++;
    } else if (c < 0x20 || c == 0x7F) {
      char esc[8];
      sqlite3_snprintf((int)sizeof(esc), esc, "\\u%04x", c);
      hermes_buf_append(b, esc, 6);
      i++;
    } else {
      i += appendValidChar(b, z + i, n - i);
    }
  }
  hermes_buf_append(b, "\"", 1);
}

/* zIn with U+FFFD for what is not valid UTF-8, in sqlite3_malloc'd memory
** (NULL when out of memory): a message SQLite hands on must be UTF-8, or a
** client decoding it (Python) fails with an error of its own instead. */
static char *validText(const char *zIn) {
  int n = (int)strlen(zIn);
  int i = 0;
  HBuf b;
  memset(&b, 0, sizeof(b));
  while (i < n) i += appendValidChar(&b, (const unsigned char *)zIn + i, n - i);
  hermes_buf_append(&b, "", 1); /* the NUL */
  if (b.oom) {
    hermes_buf_free(&b);
    return NULL;
  }
  return b.a;
}

static int jsonToken(void *pCtx, int tflags, const char *pToken, int nToken, int iStart,
                     int iEnd) {
  JsonTokens *j = (JsonTokens *)pCtx;
  int bColocated = (tflags & FTS5_TOKEN_COLOCATED) != 0;
  int iPos;
  char num[96];

  /* A colocated token shares the position of the token before it. */
  if (bColocated) {
    iPos = j->iPos > 0 ? j->iPos - 1 : 0;
  } else {
    iPos = j->iPos++;
  }
  hermes_buf_append(&j->out, j->nToken ? ",{\"token\":" : "{\"token\":", j->nToken ? 10 : 9);
  jsonString(&j->out, pToken, nToken);
  /* At most 4 * 11 digits plus 48 bytes of keys: num always has room. */
  sqlite3_snprintf((int)sizeof(num), num,
                   ",\"start\":%d,\"end\":%d,\"pos\":%d,\"colocated\":%s}", iStart, iEnd,
                   iPos, bColocated ? "true" : "false");
  hermes_buf_append(&j->out, num, strlen(num));
  j->nToken++;
  return j->out.oom ? SQLITE_NOMEM : SQLITE_OK;
}

/* The first option (key and value) of azArg the tokenizer refuses on its own,
** as an index into azArg; -1 when each is fine alone. */
static int firstBadOption(const fts5_tokenizer *pTok, void *pUserData, const char **azArg,
                          int nArg) {
  int i;
  for (i = 0; i < nArg; i += 2) {
    Fts5Tokenizer *pOne = NULL;
    int rc = pTok->xCreate(pUserData, azArg + i, nArg - i < 2 ? 1 : 2, &pOne);
    if (pOne != NULL) pTok->xDelete(pOne);
    if (rc != SQLITE_OK) return i;
  }
  return -1;
}

/* The v1 tokenizer API has no message channel: name the option refused, and
** what every option takes. */
static void constructorError(sqlite3_context *ctx, const char *zFunc, int rc,
                             const fts5_tokenizer *pTok, void *pUserData, const char **azArg,
                             int nArg) {
  int iBad = rc == SQLITE_NOMEM ? -1 : firstBadOption(pTok, pUserData, azArg, nArg);
  char *zWhich;
  char *zShown;
  char *zMsg;
  if (iBad < 0) {
    zWhich = sqlite3_mprintf("%s", sqlite3_errstr(rc));
  } else if (iBad + 1 < nArg) {
    zWhich = sqlite3_mprintf("refused '%s %s'", azArg[iBad], azArg[iBad + 1]);
  } else {
    zWhich = sqlite3_mprintf("refused '%s' with no value", azArg[iBad]);
  }
  zShown = zWhich ? validText(zWhich) : NULL;
  zMsg = sqlite3_mprintf(
      "%s: error in tokenizer constructor (%s): 'unigrams', 'variants', 'glue', 'kana', "
      "'symbols', 'compose', 'letters' and 'selectors' take 0 or 1, every other argument must "
      "be a valid unicode61 option with its value (remove_diacritics 0|1|2, categories, "
      "tokenchars, separators)",
      zFunc, zShown ? zShown : sqlite3_errstr(rc));
  sqlite3_result_error(ctx, zMsg ? zMsg : "error in tokenizer constructor", -1);
  sqlite3_free(zMsg);
  sqlite3_free(zShown);
  sqlite3_free(zWhich);
}

static void tokensImpl(sqlite3_context *ctx, int argc, sqlite3_value **argv, int flags,
                       const char *zFunc) {
  fts5_api *pApi = (fts5_api *)sqlite3_user_data(ctx);
  const char *zText;
  int nText;
  const char **azArg = NULL;
  int nArg = argc - 1;
  void *pUserData = NULL;
  fts5_tokenizer tok;
  Fts5Tokenizer *pTok = NULL;
  JsonTokens j;
  int rc;
  int i;

  memset(&j, 0, sizeof(j));
  if (argc < 1) {
    char *zMsg = sqlite3_mprintf("%s: expected (text [, tokenizer args...])", zFunc);
    sqlite3_result_error(ctx, zMsg ? zMsg : "wrong number of arguments", -1);
    sqlite3_free(zMsg);
    return;
  }
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  zText = (const char *)sqlite3_value_text(argv[0]);
  nText = sqlite3_value_bytes(argv[0]);
  if (zText == NULL && nText > 0) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (nArg > 0) {
    azArg = (const char **)sqlite3_malloc64(sizeof(const char *) * (sqlite3_uint64)nArg);
    if (azArg == NULL) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    for (i = 0; i < nArg; i++) {
      azArg[i] = (const char *)sqlite3_value_text(argv[i + 1]);
      if (azArg[i] == NULL) {
        char *zMsg = sqlite3_mprintf("%s: tokenizer argument %d is NULL", zFunc, i + 1);
        sqlite3_result_error(ctx, zMsg ? zMsg : "NULL tokenizer argument", -1);
        sqlite3_free(zMsg);
        sqlite3_free(azArg);
        return;
      }
    }
  }

  rc = pApi->xFindTokenizer(pApi, HERMES_TOKENIZER_NAME, &pUserData, &tok);
  if (rc == SQLITE_OK) rc = tok.xCreate(pUserData, azArg, nArg, &pTok);
  if (rc != SQLITE_OK) {
    constructorError(ctx, zFunc, rc, &tok, pUserData, azArg, nArg);
    sqlite3_free(azArg);
    return;
  }

  hermes_buf_append(&j.out, "[", 1);
  rc = tok.xTokenize(pTok, (void *)&j, flags, zText, nText, jsonToken);
  hermes_buf_append(&j.out, "]", 1);
  tok.xDelete(pTok);
  sqlite3_free(azArg);

  if (rc == SQLITE_NOMEM) {
    sqlite3_result_error_nomem(ctx);
  } else if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
  } else {
    hermes_buf_result_text(&j.out, ctx); /* also reports NOMEM and TOOBIG */
  }
  hermes_buf_free(&j.out);
}

void hermes_cjk_tokens(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  tokensImpl(ctx, argc, argv, FTS5_TOKENIZE_DOCUMENT, "cjk_tokens");
}

void hermes_cjk_tokens_query(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  tokensImpl(ctx, argc, argv, FTS5_TOKENIZE_QUERY, "cjk_tokens_query");
}

char *hermes_version_text(void) {
  return sqlite3_mprintf("hermes-fts %s; fts5 api v1; sqlite %s", HERMES_FTS_VERSION_STRING,
                         sqlite3_libversion());
}

void hermes_cjk_version(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  char *z;
  (void)argc;
  (void)argv;
  z = hermes_version_text();
  if (z == NULL) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}
