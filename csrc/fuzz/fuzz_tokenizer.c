/*
** Fuzz/sanitizer harness for the cjk_unicode61 extension.
**
** Two ways to build it (both link the extension sources directly and the
** system libsqlite3).  SRCS = every csrc .c file, VERSION = the one in
** hermes_fts/_version.py (csrc/build_config.py gives both to the tests):
**
**   libFuzzer (clang):
**     clang -g -O1 -fsanitize=fuzzer,address,undefined -Icsrc
**       -DHERMES_FTS_VERSION=$VERSION
**       csrc/fuzz/fuzz_tokenizer.c $SRCS -lsqlite3 -o fuzz_tokenizer
**     ./fuzz_tokenizer -max_total_time=30
**
**   standalone driver (gcc or clang, no libFuzzer), used by
**   tests/test_c_sanitizers.py:
**     gcc -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
**       -DHERMES_FUZZ_STANDALONE -DHERMES_FTS_VERSION=$VERSION -Icsrc
**       csrc/fuzz/fuzz_tokenizer.c $SRCS
**       -lsqlite3 -o driver
**     ./driver 3000        # pseudo-random inputs, deterministic seed
**
** Each input goes through cjk_tokens/cjk_tokens_query (as blob and text),
** cjk_fold, cjk_fold_find, INSERT into tables with and without "unigrams 1",
** "variants 1", "glue 1", "kana 1" and "symbols 1", a MATCH on a phrase cut from the input, cjk_highlight,
** cjk_snippet and an FTS5 integrity-check.
** A failed integrity-check aborts: it would mean the tokenizer is not
** deterministic or emitted inconsistent tokens.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hermes_fts.h"

static sqlite3 *g_db; /* harness-only state: one connection for all inputs */

static void execOrDie(const char *zSql) {
  char *zErr = NULL;
  if (sqlite3_exec(g_db, zSql, NULL, NULL, &zErr) != SQLITE_OK) {
    fprintf(stderr, "harness: %s failed: %s\n", zSql, zErr ? zErr : "?");
    abort();
  }
}

static void setup(void) {
  /* void(*)(void) is the documented type of sqlite3_auto_extension's arg. */
  sqlite3_auto_extension((void (*)(void))sqlite3_cjkunicode_init);
  if (sqlite3_open(":memory:", &g_db) != SQLITE_OK) abort();
  execOrDie(
      "CREATE VIRTUAL TABLE t0 USING fts5(a, b, tokenize='cjk_unicode61');"
      "CREATE VIRTUAL TABLE t1 USING fts5(a, tokenize='cjk_unicode61 unigrams 1 "
      "remove_diacritics 2 variants 1 glue 1 kana 1 symbols 1 compose 1 letters 1 selectors 1');"
      "CREATE VIRTUAL TABLE t2 USING fts5(a, tokenize='cjk_unicode61 unigrams 1 "
      "tokenchars ''-_'' separators ''x''');");
}

/* Run one statement with ?1 = blob/text a, ?2 = b; step to the end. */
static int runStmt(const char *zSql, const uint8_t *a, int na, int bText, const uint8_t *b,
                   int nb) {
  sqlite3_stmt *pStmt = NULL;
  int rc = sqlite3_prepare_v2(g_db, zSql, -1, &pStmt, NULL);
  if (rc != SQLITE_OK) {
    fprintf(stderr, "harness: prepare failed: %s\n", sqlite3_errmsg(g_db));
    abort();
  }
  if (sqlite3_bind_parameter_count(pStmt) >= 1) {
    if (bText) {
      sqlite3_bind_text(pStmt, 1, (const char *)a, na, SQLITE_STATIC);
    } else {
      sqlite3_bind_blob(pStmt, 1, a, na, SQLITE_STATIC);
    }
  }
  if (sqlite3_bind_parameter_count(pStmt) >= 2) {
    sqlite3_bind_text(pStmt, 2, (const char *)b, nb, SQLITE_STATIC);
  }
  while ((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    int i;
    for (i = 0; i < sqlite3_column_count(pStmt); i++) {
      /* Touch every result byte so ASan sees any bad length. */
      const unsigned char *z = sqlite3_column_text(pStmt, i);
      int n = sqlite3_column_bytes(pStmt, i);
      volatile unsigned sum = 0;
      int k;
      for (k = 0; z && k < n; k++) sum += z[k];
      (void)sum;
    }
  }
  sqlite3_finalize(pStmt);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *z;
  int n;
  int mode;
  int half;
  uint8_t *zPhrase;
  int nPhrase = 0;
  int k;
  int iStart;
  int nLen;

  if (g_db == NULL) setup();
  if (size > (1u << 20)) return 0;
  mode = size ? data[0] : 0;
  z = size ? data + 1 : data;
  n = size ? (int)size - 1 : 0;
  half = n / 2;

  runStmt("SELECT cjk_tokens(?1), cjk_tokens_query(?1), cjk_tokens(?1, 'unigrams', '1'), "
          "cjk_tokens_query(?1, 'variants', '1'), cjk_tokens(?1, 'glue', '1'), cjk_fold(?1), "
          "cjk_tokens(?1, 'kana', '1'), cjk_fold_find(?1, substr(?1, 1 + length(?1) / 2, 3))",
          z, n, mode & 1, NULL, 0);
  runStmt("SELECT cjk_tokens(?1, 'remove_diacritics', '0', 'tokenchars', '-')", z, n, 1, NULL, 0);
  execOrDie("DELETE FROM t0; DELETE FROM t1; DELETE FROM t2;");
  if (runStmt("INSERT INTO t0(a, b) VALUES(?1, ?2)", z, half, mode & 2, z + half, n - half) !=
          SQLITE_DONE ||
      runStmt("INSERT INTO t1(a) VALUES(?1)", z, n, mode & 4, NULL, 0) != SQLITE_DONE ||
      runStmt("INSERT INTO t2(a) VALUES(?1)", z, n, 1, NULL, 0) != SQLITE_DONE) {
    fprintf(stderr, "harness: insert failed: %s\n", sqlite3_errmsg(g_db));
    abort();
  }

  /* A quoted phrase cut from the input itself, so MATCH usually hits. */
  zPhrase = (uint8_t *)malloc((size_t)n * 2 + 3);
  if (zPhrase == NULL) abort();
  iStart = n ? (mode * 7) % n : 0;
  nLen = n - iStart;
  if (nLen > 1 + (mode % 13)) nLen = 1 + (mode % 13);
  zPhrase[nPhrase++] = '"';
  for (k = 0; k < nLen; k++) {
    uint8_t c = z[iStart + k];
    if (c == 0) continue;
    if (c == '"') zPhrase[nPhrase++] = '"';
    zPhrase[nPhrase++] = c;
  }
  zPhrase[nPhrase++] = '"';
  runStmt("SELECT rowid, cjk_highlight(t0, 0, '[', ']'), cjk_highlight(t0, 1, '<', '>'), "
          "cjk_snippet(t0, -1, '[', ']', '...', 1 + ?2 % 17), cjk_snippet(t0, 1, '', '', '', 3) "
          "FROM t0 WHERE t0 MATCH ?1",
          zPhrase, nPhrase, 1, (const uint8_t *)"9", 1);
  runStmt("SELECT rowid, cjk_highlight(t1, 0, '[', ']'), cjk_snippet(t1, 0, '[', ']', '~', 5) "
          "FROM t1 WHERE t1 MATCH ?1",
          zPhrase, nPhrase, 1, NULL, 0);
  runStmt("SELECT rowid, cjk_highlight(t2, 0, '[', ']'), cjk_snippet(t2, -1, '[', ']', '~', 2) "
          "FROM t2 WHERE t2 MATCH ?1",
          zPhrase, nPhrase, 1, NULL, 0);
  free(zPhrase);

  execOrDie("INSERT INTO t0(t0) VALUES('integrity-check');"
            "INSERT INTO t1(t1) VALUES('integrity-check');"
            "INSERT INTO t2(t2) VALUES('integrity-check');");
  return 0;
}

#ifdef HERMES_FUZZ_STANDALONE
/* Pieces that exercise every branch: CJK of all scripts, width forms,
** voiced marks, separators, invalid/truncated/overlong UTF-8, surrogates,
** NUL, quotes and FTS5 syntax characters. */
static const char *const FRAGMENTS[] = {
    "中国", "人民", "修改", "youer", "東京", "タワー", "ひらがな", "한국어", "々", "〇", "・",
    "ｶﾞ", "ｷﾞ", "ﾊﾟ", "ｳﾞ", "ﾞ", "ﾟ", "ｱ", "ＡＢＣ", "１２３", "ﾡ", "\xe3\x80\x80", " ",
    "、", "。", "😀", "𠀀", "\xf0\xb1\x8d\x90", "café", "ǖ", "-", "_", "x", "\"", "*", "(",
    "國", "廣", "広", "乾", "\xef\xa4\x80", "\xf0\xaf\xa0\x80", /* Han variants, compat */
    "ラーメン", "らーめん", "ヴ", "ヾ", "ゝ", "ヷ", /* kana 1 */
    "NEAR", "AND", "\xff", "\xfe", "\xc0\xaf", "\xe4\xb8", "\xed\xa0\x80", "\xf4\x90\x80\x80",
    "\x80", "\xf0\x9f", "\xe0\x80\x80", "\x00", "\t\n", "ア\xe3\x82\x99", "\xef\xbd\x9e",
};

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t nextRand(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 16);
}

int main(int argc, char **argv) {
  int nIter = argc > 1 ? atoi(argv[1]) : 2000;
  size_t nFrag = sizeof(FRAGMENTS) / sizeof(FRAGMENTS[0]);
  uint8_t *buf = (uint8_t *)malloc(1 << 20);
  int it;
  if (buf == NULL) return 2;
  if (argc > 2) g_rng ^= (uint64_t)strtoull(argv[2], NULL, 10) * 0x2545F4914F6CDD1Dull;

  LLVMFuzzerTestOneInput(buf, 0);
  for (it = 0; it < nIter; it++) {
    size_t n = 0;
    int nPieces = (int)(nextRand() % 24);
    int p;
    buf[n++] = (uint8_t)nextRand();
    for (p = 0; p < nPieces; p++) {
      if (nextRand() % 4 == 0) {
        int nb = (int)(nextRand() % 6);
        while (nb-- > 0) buf[n++] = (uint8_t)nextRand();
      } else {
        const char *f = FRAGMENTS[nextRand() % nFrag];
        size_t nf = f[0] ? strlen(f) : 1; /* "\x00" is one NUL byte */
        memcpy(buf + n, f, nf);
        n += nf;
      }
    }
    LLVMFuzzerTestOneInput(buf, n);
  }

  /* One large input: linear-time paths and buffer growth. */
  {
    size_t n = 1;
    buf[0] = 3;
    while (n + 64 < (1u << 20) - 1) {
      const char *f = FRAGMENTS[nextRand() % nFrag];
      size_t nf = f[0] ? strlen(f) : 1;
      memcpy(buf + n, f, nf);
      n += nf;
    }
    LLVMFuzzerTestOneInput(buf, n);
  }
  free(buf);
  sqlite3_close(g_db);
  printf("ok %d inputs\n", nIter + 2);
  return 0;
}
#endif
