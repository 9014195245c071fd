/*
** The cjk_unicode61 FTS5 tokenizer (v1 tokenizer API, SQLite 3.34+).
**
** Segment-first design: the input is split into CJK and non-CJK segments.
** Only non-CJK segments are handed to the built-in unicode61 tokenizer, with
** a callback that rebases its offsets onto the original text; CJK runs are
** turned into overlapping bigrams here (Lucene CJKBigramFilter semantics).
** Tokens reach the caller strictly in document order, so FTS5 positions are
** consistent and every offset is an exact byte offset into the input.
**
** Width folding happens before classification, so full-width ASCII is fed to
** unicode61 as ASCII (through a folded copy with a byte offset map) and
** half-width katakana joins CJK runs as full-width katakana.  "kana 1" and
** "variants 1" then change a CJK character's token text only.  With
** "symbols 1" a symbol newer than unicode61's tables (an emoji of Unicode 7
** or later) ends a segment and is dropped, as unicode61 drops the symbols it
** knows: otherwise it reads `deploy🫠` as one word and `deploy` misses it.
** With "compose 1" decomposed Hangul jamo and a kana's combining voiced mark
** join the character before (NFC), as the composed text reads; with
** "letters 1" Greek tonos, ё and the Hebrew and Arabic vowel points are read
** as the letters without them; with "selectors 1" a variation selector after a
** CJK character is part of it, so 葛󠄀飾 (an ideographic variant) reads as 葛飾.
*/
#include "internal.h"
#include "variants.h"
SQLITE_EXTENSION_INIT3

#include <string.h>

/* ---- the tokenizer ------------------------------------------------------- */

/* One tokenizer instance: the wrapped unicode61 plus our own option. */
typedef struct CjkTokenizer {
  fts5_tokenizer inner;  /* unicode61's methods, found via xFindTokenizer */
  Fts5Tokenizer *pInner; /* unicode61 instance created with the passed-through args */
  int bUnigrams;         /* "unigrams 1": colocated unigrams in documents */
  int bVariants;         /* "variants 1": Han variants folded (variants.c) */
  int bKana;             /* "kana 1": katakana folded to hiragana (chars.c) */
  int bGlue;             /* "glue 1": marked copies of words unicode61 reads apart */
  int bSymbols;          /* "symbols 1": late symbols separate words (chars.c) */
  int bCompose;          /* "compose 1": decomposed text composed (chars.c) */
  int bLetters;          /* "letters 1": letters read without their marks (chars.c) */
  int bSelectors;        /* "selectors 1": variation selectors join the CJK character */
  int foldFlags;         /* HERMES_FOLD_* of the two, for hermes_fold_next */
} CjkTokenizer;

typedef int (*TokenCallback)(void *, int, const char *, int, int, int);

/* State of one xTokenize call. */
typedef struct TokenizeState {
  CjkTokenizer *p;
  void *pCtx;            /* caller's context for xToken */
  TokenCallback xToken;  /* caller's callback */
  int flags;             /* FTS5_TOKENIZE_* flags of this call */
  int bUnigrams;         /* emit colocated unigrams in this call */
  int bGlue;             /* emit colocated glue marks in this call */
  const unsigned char *z;
  int n;

  /* The CJK run being built: only the previous character is needed. */
  int nRun;
  unsigned int prevCp;
  int prevStart;
  int prevEnd;

  /* Offset translation for the non-CJK segment being fed to unicode61:
  ** original = iBase + offset when aMap is NULL, else aMap[offset]. */
  int iBase;
  const int *aMap;
  int nMapped;           /* valid indices of aMap are 0..nMapped */
  /* What stopped the segment's tokens (the caller's SQLITE_DONE, an error):
  ** unicode61 reports SQLITE_DONE as SQLITE_OK, so it is kept here. */
  int rcStop;

  /* Glue marks ("glue 1", emitGlueMarks): whether a character unicode61
  ** reads as a letter (CJK, or a late symbol under "symbols 1") comes right
  ** before / after the segment, the words unicode61 gave so far, and whether
  ** the first one touches the segment's start. */
  int bGluedBefore;
  int bGluedAfter;
  int nSegFed;           /* bytes handed to unicode61 (offsets of its tokens) */
  int nSegWords;
  int bFirstGlued;
  HBuf prevWord;         /* the previous word, of this segment or an earlier one */
  int bWordSince;        /* a word came since the last CJK character */
  int bSymbolSince;      /* ... and a late symbol since that word */
  HBuf mark;             /* a glue mark being built */

  /* Reused across segments of one call; only needed when folding happened. */
  HBuf fold;
  int *aMapAlloc;
  int nMapAlloc;
} TokenizeState;

static const char *const UNIGRAMS_OPTION = "unigrams";
static const char *const VARIANTS_OPTION = "variants";
static const char *const GLUE_OPTION = "glue";
static const char *const KANA_OPTION = "kana";
static const char *const SYMBOLS_OPTION = "symbols";
static const char *const COMPOSE_OPTION = "compose";
static const char *const LETTERS_OPTION = "letters";
static const char *const SELECTORS_OPTION = "selectors";

/* Our options take exactly "0" or "1"; anything else (or a missing value)
** fails the constructor, as unicode61 does for its own options. */
static int parseFlag(const char *zVal, int *pbOut) {
  if (zVal != NULL && strcmp(zVal, "0") == 0) {
    *pbOut = 0;
  } else if (zVal != NULL && strcmp(zVal, "1") == 0) {
    *pbOut = 1;
  } else {
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

static void cjkDelete(Fts5Tokenizer *pTok) {
  CjkTokenizer *p = (CjkTokenizer *)pTok;
  if (p == NULL) return;
  if (p->pInner) p->inner.xDelete(p->pInner);
  sqlite3_free(p);
}

/*
** Arguments come as key/value pairs.  "unigrams 0|1", "variants 0|1",
** "glue 0|1", "kana 0|1", "symbols 0|1", "compose 0|1", "letters 0|1" and
** "selectors 0|1" are ours and removed;
** everything else goes to unicode61
** unchanged, so its options work and an unknown argument fails exactly as it
** does in unicode61.
*/
static int cjkCreate(void *pCtx, const char **azArg, int nArg, Fts5Tokenizer **ppOut) {
  fts5_api *pApi = (fts5_api *)pCtx;
  CjkTokenizer *p;
  const char **azPass = NULL;
  int nPass = 0;
  void *pInnerUserData = NULL;
  int rc = SQLITE_OK;
  int i;

  *ppOut = NULL;
  p = (CjkTokenizer *)sqlite3_malloc64(sizeof(*p));
  if (p == NULL) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  if (nArg > 0) {
    azPass = (const char **)sqlite3_malloc64(sizeof(const char *) * (sqlite3_uint64)nArg);
    if (azPass == NULL) {
      rc = SQLITE_NOMEM;
      goto done;
    }
  }
  for (i = 0; i < nArg; i += 2) {
    const char *zVal = (i + 1 < nArg) ? azArg[i + 1] : NULL;
    if (sqlite3_stricmp(azArg[i], UNIGRAMS_OPTION) == 0) {
      if ((rc = parseFlag(zVal, &p->bUnigrams)) != SQLITE_OK) goto done;
      continue;
    }
    if (sqlite3_stricmp(azArg[i], VARIANTS_OPTION) == 0) {
      if ((rc = parseFlag(zVal, &p->bVariants)) != SQLITE_OK) goto done;
      continue;
    }
    if (sqlite3_stricmp(azArg[i], GLUE_OPTION) == 0) {
      if ((rc = parseFlag(zVal, &p->bGlue)) != SQLITE_OK) goto done;
      continue;
    }
    if (sqlite3_stricmp(azArg[i], KANA_OPTION) == 0) {
      if ((rc = parseFlag(zVal, &p->bKana)) != SQLITE_OK) goto done;
      continue;
    }
    if (sqlite3_stricmp(azArg[i], SYMBOLS_OPTION) == 0) {
      if ((rc = parseFlag(zVal, &p->bSymbols)) != SQLITE_OK) goto done;
      continue;
    }
    if (sqlite3_stricmp(azArg[i], COMPOSE_OPTION) == 0) {
      if ((rc = parseFlag(zVal, &p->bCompose)) != SQLITE_OK) goto done;
      continue;
    }
    if (sqlite3_stricmp(azArg[i], LETTERS_OPTION) == 0) {
      if ((rc = parseFlag(zVal, &p->bLetters)) != SQLITE_OK) goto done;
      continue;
    }
    if (sqlite3_stricmp(azArg[i], SELECTORS_OPTION) == 0) {
      if ((rc = parseFlag(zVal, &p->bSelectors)) != SQLITE_OK) goto done;
      continue;
    }
    azPass[nPass++] = azArg[i];
    if (i + 1 < nArg) azPass[nPass++] = azArg[i + 1];
  }

  p->foldFlags = (p->bCompose ? HERMES_FOLD_COMPOSE : 0) | (p->bLetters ? HERMES_FOLD_LETTERS : 0);
  rc = pApi->xFindTokenizer(pApi, "unicode61", &pInnerUserData, &p->inner);
  if (rc != SQLITE_OK) goto done;
  rc = p->inner.xCreate(pInnerUserData, azPass, nPass, &p->pInner);

done:
  sqlite3_free(azPass);
  if (rc != SQLITE_OK) {
    cjkDelete((Fts5Tokenizer *)p);
    return rc;
  }
  *ppOut = (Fts5Tokenizer *)p;
  return SQLITE_OK;
}

/* Emit one colocated mark token: zMark [word1 zMark] word2. */
static int emitMark(TokenizeState *s, const char *zMark, const HBuf *pWord1, const char *pWord2,
                    int nWord2, int iStart, int iEnd) {
  size_t nMark = strlen(zMark);
  s->mark.n = 0;
  hermes_buf_append(&s->mark, zMark, nMark);
  if (pWord1) {
    hermes_buf_append(&s->mark, pWord1->a, pWord1->n);
    hermes_buf_append(&s->mark, zMark, nMark);
  }
  hermes_buf_append(&s->mark, pWord2, (size_t)nWord2);
  if (s->mark.oom) return SQLITE_NOMEM;
  return s->xToken(s->pCtx, FTS5_TOKEN_COLOCATED, s->mark.a, (int)s->mark.n, iStart, iEnd);
}

/*
** Glue marks: colocated copies of the words a unicode61 index of the raw text
** (Hermes' messages_fts) reads differently.  It sees "配置think.toml文件" as
** the tokens "配置think" and "toml文件", and "ｔｈｉｎｋ" as itself, so a word
** search there misses the row, and the search must look for it here.  A mark
** is a rare token, so that look reads a few rows instead of the term's
** doclists.  A late symbol ("symbols 1") glues as CJK does: unicode61 reads
** "deploy🫠" as one token.  For the segment's words w1 .. wk:
**
**   mark                  at   when
**   WORD w                w    w1 after CJK, wk before CJK, or w width folded
**   LEFT w1 LEFT w2       w2   CJK right before w1
**   RIGHT wk-1 RIGHT wk   wk   CJK right after wk
**   WIDTH w               w    width folding changed w
**   JOIN w' JOIN w        w    a late symbol between the previous word w' and w
**
** A one-word term is looked up by WORD; a phrase by its two first words,
** its two last, WIDTH of each word and JOIN of each pair (only its first
** word can follow CJK and only its last precede it: its words are
** consecutive, so no CJK comes between them, but a late symbol takes no
** position and may).  Positions and sizes stay those of the plain stream:
** FTS5 counts no colocated token in a column's size.
*/
static int emitGlueMarks(TokenizeState *s, const char *pToken, int nToken, int iStart, int iEnd,
                         int bTouchesStart, int bTouchesEnd, int bWidthFolded) {
  int rc = SQLITE_OK;
  int bLast = bTouchesEnd && s->bGluedAfter;
  if (s->nSegWords == 0) s->bFirstGlued = bTouchesStart && s->bGluedBefore;
  if ((s->nSegWords == 0 && s->bFirstGlued) || bLast || bWidthFolded) {
    rc = emitMark(s, HERMES_MARK_WORD, NULL, pToken, nToken, iStart, iEnd);
  }
  if (rc == SQLITE_OK && s->nSegWords == 1 && s->bFirstGlued) {
    rc = emitMark(s, HERMES_MARK_LEFT, &s->prevWord, pToken, nToken, iStart, iEnd);
  }
  if (rc == SQLITE_OK && bLast && s->nSegWords > 0) {
    rc = emitMark(s, HERMES_MARK_RIGHT, &s->prevWord, pToken, nToken, iStart, iEnd);
  }
  if (rc == SQLITE_OK && bWidthFolded) {
    rc = emitMark(s, HERMES_MARK_WIDTH, NULL, pToken, nToken, iStart, iEnd);
  }
  if (rc == SQLITE_OK && s->bWordSince && s->bSymbolSince) {
    rc = emitMark(s, HERMES_MARK_JOIN, &s->prevWord, pToken, nToken, iStart, iEnd);
  }
  s->bWordSince = 1;
  s->bSymbolSince = 0;
  s->nSegWords++;
  s->prevWord.n = 0;
  hermes_buf_append(&s->prevWord, pToken, (size_t)nToken);
  if (rc == SQLITE_OK && s->prevWord.oom) rc = SQLITE_NOMEM;
  return rc;
}

/* Whether a[0..n) and b[0..n) hold the same bytes (libc's memcmp is not ours
** to call: docs/DESIGN.md §3.7). */
static int sameBytes(const char *a, const unsigned char *b, int n) {
  int k;
  for (k = 0; k < n; k++) {
    if ((unsigned char)a[k] != b[k]) return 0;
  }
  return 1;
}

/* unicode61's callback: translate offsets back into the original text. */
static int innerToken(void *pCtx, int tflags, const char *pToken, int nToken, int iStart,
                      int iEnd) {
  TokenizeState *s = (TokenizeState *)pCtx;
  int bTouchesStart = iStart <= 0;
  int bTouchesEnd = iEnd >= s->nSegFed;
  int bWidthFolded = 0;
  int rc;
  if (s->aMap) {
    int nFed;
    int iFed;
    /* Offsets from unicode61 always lie inside the buffer it was given;
    ** the clamps only guard the map index. */
    if (iStart < 0) iStart = 0;
    if (iEnd > s->nMapped) iEnd = s->nMapped;
    if (iStart > iEnd) iStart = iEnd;
    nFed = iEnd - iStart;
    iFed = iStart;
    iStart = s->aMap[iStart];
    iEnd = s->aMap[iEnd];
    /* Folding changed the word: it shortened it (full-width ASCII: 3 bytes
    ** -> 1, a composed or dropped mark) or changed a letter in place (ά -> α). */
    bWidthFolded = iEnd - iStart != nFed || !sameBytes(s->fold.a + iFed, s->z + iStart, nFed);
  } else {
    iStart += s->iBase;
    iEnd += s->iBase;
  }
  rc = s->xToken(s->pCtx, tflags, pToken, nToken, iStart, iEnd);
  if (rc == SQLITE_OK && s->bGlue) {
    rc = emitGlueMarks(s, pToken, nToken, iStart, iEnd, bTouchesStart, bTouchesEnd,
                       bWidthFolded);
  }
  s->rcStop = rc;
  return rc;
}

/* unicode61's xTokenize on z[0..n), then what stopped it, if anything did. */
static int feedInner(TokenizeState *s, const char *z, int n) {
  CjkTokenizer *p = s->p;
  int rc = p->inner.xTokenize(p->pInner, (void *)s, s->flags, z, n, innerToken);
  return rc == SQLITE_OK ? s->rcStop : rc;
}

/* Feed z[iStart..iEnd) (non-CJK) to unicode61. */
static int flushSegment(TokenizeState *s, int iStart, int iEnd, int bFolded) {
  CjkTokenizer *p = s->p;
  int i;
  int nSeg = iEnd - iStart;

  /* A segment starts at the text's start or after CJK or a late symbol, and
  ** ends at its end or before one: the characters unicode61 would glue on. */
  s->bGluedBefore = iStart > 0;
  s->bGluedAfter = iEnd < s->n;
  s->nSegWords = 0;
  if (!bFolded) {
    /* Common case (all English text): one call, no copy, no allocation. */
    s->aMap = NULL;
    s->iBase = iStart;
    s->nSegFed = nSeg;
    return feedInner(s, (const char *)s->z + iStart, nSeg);
  }

  /* Folding and composing never lengthen a character (3 bytes -> 1 or 3, 6 -> 3), so the
  ** folded copy and its map need at most nSeg bytes / nSeg+1 entries. */
  s->fold.n = 0;
  if (hermes_buf_reserve(&s->fold, (size_t)nSeg) != SQLITE_OK) return SQLITE_NOMEM;
  if (s->nMapAlloc < nSeg + 1) {
    int *aNew =
        (int *)sqlite3_realloc64(s->aMapAlloc, sizeof(int) * ((sqlite3_uint64)nSeg + 1));
    if (aNew == NULL) return SQLITE_NOMEM;
    s->aMapAlloc = aNew;
    s->nMapAlloc = nSeg + 1;
  }
  for (i = iStart; i < iEnd;) {
    unsigned int cp;
    int bCharFolded;
    /* Same bound as the main scan, so character boundaries are identical. */
    int len = hermes_fold_next(s->z + i, s->n - i, &cp, &bCharFolded, p->foldFlags);
    int k;
    if (bCharFolded) {
      char buf[4];
      int nOut = (p->foldFlags & HERMES_FOLD_LETTERS) ? hermes_ligature_letters(cp, buf) : 0;
      if (nOut == 0) nOut = hermes_utf8_encode(cp, buf);
      for (k = 0; k < nOut; k++) s->aMapAlloc[s->fold.n + (size_t)k] = i;
      memcpy(s->fold.a + s->fold.n, buf, (size_t)nOut);
      s->fold.n += (size_t)nOut;
    } else {
      /* Copy verbatim (invalid bytes included) so unicode61 sees exactly
      ** what it would have seen without folding elsewhere. */
      for (k = 0; k < len; k++) {
        s->aMapAlloc[s->fold.n + (size_t)k] = i + k;
        s->fold.a[s->fold.n + (size_t)k] = (char)s->z[i + k];
      }
      s->fold.n += (size_t)len;
    }
    i += len;
  }
  s->aMapAlloc[s->fold.n] = iEnd;
  s->aMap = s->aMapAlloc;
  s->nMapped = (int)s->fold.n;
  s->nSegFed = (int)s->fold.n;
  return feedInner(s, s->fold.a, (int)s->fold.n);
}

/* Emit the UTF-8 of one or two folded code points as a token. */
static int emitCjk(TokenizeState *s, int tflags, unsigned int cp1, unsigned int cp2, int bTwo,
                   int iStart, int iEnd) {
  char buf[8];
  int nBuf = hermes_utf8_encode(cp1, buf);
  if (bTwo) nBuf += hermes_utf8_encode(cp2, buf + nBuf);
  return s->xToken(s->pCtx, tflags, buf, nBuf, iStart, iEnd);
}

/* Add one CJK character at z[iStart..iEnd) to the current run. */
static int addRunChar(TokenizeState *s, unsigned int cp, int iStart, int iEnd) {
  int rc = SQLITE_OK;
  if (s->nRun > 0) {
    rc = emitCjk(s, 0, s->prevCp, cp, 1, s->prevStart, iEnd);
    if (rc == SQLITE_OK && s->bUnigrams) {
      /* Colocated with bigram(i): positions stay those of the plain run. */
      rc = emitCjk(s, FTS5_TOKEN_COLOCATED, s->prevCp, 0, 0, s->prevStart, s->prevEnd);
    }
  }
  s->nRun++;
  s->prevCp = cp;
  s->prevStart = iStart;
  s->prevEnd = iEnd;
  return rc;
}

/* The current run ended: a lone character becomes a unigram (Lucene
** <SINGLE>); a longer run only needs the last character's colocated unigram. */
static int endRun(TokenizeState *s) {
  int rc = SQLITE_OK;
  if (s->nRun == 1) {
    rc = emitCjk(s, 0, s->prevCp, 0, 0, s->prevStart, s->prevEnd);
  } else if (s->nRun > 1 && s->bUnigrams) {
    rc = emitCjk(s, FTS5_TOKEN_COLOCATED, s->prevCp, 0, 0, s->prevStart, s->prevEnd);
  }
  s->nRun = 0;
  return rc;
}

/* z[i] is ASCII and nothing can join it ("compose 1", "letters 1": the next
** byte starts no character at or above U+0300, the first a mark).  Otherwise it is
** read by hermes_fold_next, as flushSegment reads it: the same boundaries. */
static int asciiAlone(const TokenizeState *s, int i) {
  return s->z[i] < 0x80 &&
         !(s->p->foldFlags && i + 1 < s->n && s->z[i + 1] >= HERMES_COMPOSE_LEAD_MIN);
}

static int cjkTokenize(Fts5Tokenizer *pTok, void *pCtx, int flags, const char *pText, int nText,
                       TokenCallback xToken) {
  TokenizeState s;
  int rc = SQLITE_OK;
  int i = 0;
  int iSeg = -1;      /* start of the pending non-CJK segment, -1 if none */
  int bSegFolded = 0; /* the pending segment contains folded characters */
  int bDocument;

  if (pText == NULL || nText <= 0) return SQLITE_OK;

  memset(&s, 0, sizeof(s));
  s.p = (CjkTokenizer *)pTok;
  s.pCtx = pCtx;
  s.xToken = xToken;
  s.flags = flags;
  /* Unigrams and glue marks only when indexing documents: query, prefix and
  ** auxiliary tokenization must match the plain bigram stream exactly (a
  ** query asks for a glue mark by writing it). */
  bDocument = (flags & FTS5_TOKENIZE_DOCUMENT) != 0 &&
              (flags & (FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_AUX)) == 0;
  s.bUnigrams = s.p->bUnigrams && bDocument;
  s.bGlue = s.p->bGlue && bDocument;
  s.z = (const unsigned char *)pText;
  s.n = nText;

  while (i < nText) {
    unsigned int cp;
    int bFolded;
    int bCjk;
    int bLate;
    int len;

    if (asciiAlone(&s, i)) {
      /* ASCII is never CJK and never folded: skip the whole stretch. */
      if (s.nRun > 0 && (rc = endRun(&s)) != SQLITE_OK) break;
      if (iSeg < 0) iSeg = i;
      do {
        i++;
      } while (i < nText && asciiAlone(&s, i));
      continue;
    }

    len = hermes_fold_next(s.z + i, nText - i, &cp, &bFolded, s.p->foldFlags);
    bCjk = hermes_is_cjk(cp);
    bLate = !bCjk && s.p->bSymbols && hermes_is_late_symbol(cp);
    if ((bCjk || bLate) && iSeg >= 0) {
      rc = flushSegment(&s, iSeg, i, bSegFolded);
      iSeg = -1;
      bSegFolded = 0;
      if (rc != SQLITE_OK) break;
    }
    if (bCjk) {
      s.bWordSince = 0; /* a phrase never reads across CJK: its bigrams hold positions */
      /* Only the token text changes: offsets stay those of the original. */
      if (s.p->bKana) cp = hermes_kana_fold(cp);
      if (s.p->bVariants) cp = hermes_variant_fold(cp);
      if (s.p->bSelectors) len += hermes_selectors_at(s.z + i + len, nText - i - len);
      rc = addRunChar(&s, cp, i, i + len);
      if (rc != SQLITE_OK) break;
    } else {
      if (s.nRun > 0 && (rc = endRun(&s)) != SQLITE_OK) break;
      if (bLate) {
        s.bSymbolSince = 1; /* dropped, as unicode61 drops the symbols it knows */
      } else {
        if (iSeg < 0) iSeg = i;
        bSegFolded |= bFolded;
      }
    }
    i += len;
  }

  if (rc == SQLITE_OK && s.nRun > 0) rc = endRun(&s);
  if (rc == SQLITE_OK && iSeg >= 0) rc = flushSegment(&s, iSeg, nText, bSegFolded);

  hermes_buf_free(&s.fold);
  hermes_buf_free(&s.mark);
  hermes_buf_free(&s.prevWord);
  sqlite3_free(s.aMapAlloc);
  return rc;
}

/* pContext given to xCreateTokenizer must be the connection's fts5_api, so
** that xCreate finds unicode61 on the same connection without global state. */
const fts5_tokenizer hermes_cjk_tokenizer = {cjkCreate, cjkDelete, cjkTokenize};
