/*
** Han variant folding (variants.c): the tokenizer option "variants 1" and
** the folding SQL functions (fold.c).  The table is csrc/cjk_variants.h, generated
** from csrc/cjk_variants.txt by csrc/gen_cjk_variants.py.
*/
#ifndef HERMES_VARIANTS_H
#define HERMES_VARIANTS_H

#include "internal.h"

/* The canonical form of Han character cp (cp itself when it has none).
** Both cp and the result are CJK, so folding never moves a run boundary. */
unsigned int hermes_variant_fold(unsigned int cp);

#endif /* HERMES_VARIANTS_H */
