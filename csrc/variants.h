/*
** Han variant folding (variants.c): the tokenizer option "variants 1" and
** the cjk_fold() SQL function.  The table is csrc/cjk_variants.h, generated
** from csrc/cjk_variants.txt by csrc/gen_cjk_variants.py.
*/
#ifndef HERMES_VARIANTS_H
#define HERMES_VARIANTS_H

#include "internal.h"

/* The canonical form of Han character cp (cp itself when it has none).
** Both cp and the result are CJK, so folding never moves a run boundary. */
unsigned int hermes_variant_fold(unsigned int cp);

/* cjk_fold(text): text with the tokenizer's character folds applied (width
** folding, then Han variants), for the LIKE and trigram routes.  Bytes that
** are not valid UTF-8 are copied unchanged; NULL gives NULL. */
void hermes_cjk_fold(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#endif /* HERMES_VARIANTS_H */
