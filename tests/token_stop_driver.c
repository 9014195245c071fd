/*
** Test driver (tests/test_token_stop.py): the tokenizer's side of FTS5's xToken
** contract.  A callback that returns anything but SQLITE_OK abandons the
** tokenization: no further callbacks, and xTokenize returns that value.  FTS5's
** own callbacks never stop early, but an auxiliary function or a program
** using the fts5_tokenizer may (SQLITE_DONE: "enough").
**
** Usage: token_stop_driver TEXT STOP_AFTER [tokenizer args...]
** Prints "<callbacks seen> <xTokenize's return code>".
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hermes_fts.h"

typedef struct Count {
  int nSeen;
  int nStopAfter;
} Count;

static int countToken(void *pCtx, int tflags, const char *pToken, int nToken, int iStart,
                      int iEnd) {
  Count *c = (Count *)pCtx;
  (void)tflags;
  (void)pToken;
  (void)nToken;
  (void)iStart;
  (void)iEnd;
  c->nSeen++;
  return c->nSeen >= c->nStopAfter ? SQLITE_DONE : SQLITE_OK;
}

int main(int argc, char **argv) {
  sqlite3 *db = NULL;
  sqlite3_stmt *pStmt = NULL;
  fts5_api *pApi = NULL;
  fts5_tokenizer tok;
  Fts5Tokenizer *pTok = NULL;
  void *pUserData = NULL;
  Count c = {0, 0};
  int rc;

  if (argc < 3) return 2;
  c.nStopAfter = atoi(argv[2]);
  sqlite3_auto_extension((void (*)(void))sqlite3_cjkunicode_init);
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return 3;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &pStmt, NULL) != SQLITE_OK) return 4;
  sqlite3_bind_pointer(pStmt, 1, (void *)&pApi, "fts5_api_ptr", NULL);
  sqlite3_step(pStmt);
  sqlite3_finalize(pStmt);
  if (pApi == NULL) return 5;
  if (pApi->xFindTokenizer(pApi, "hermes_fts_cjk", &pUserData, &tok) != SQLITE_OK) return 6;
  if (tok.xCreate(pUserData, (const char **)(argv + 3), argc - 3, &pTok) != SQLITE_OK) return 7;
  rc = tok.xTokenize(pTok, (void *)&c, FTS5_TOKENIZE_DOCUMENT, argv[1], (int)strlen(argv[1]),
                     countToken);
  tok.xDelete(pTok);
  sqlite3_close(db);
  printf("%d %d\n", c.nSeen, rc);
  return 0;
}
