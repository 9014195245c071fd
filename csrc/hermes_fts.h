/*
** Public interface of the cjk_unicode61 SQLite loadable extension.
**
** A host normally never includes this: SQLite finds the entry point by name
** (".load cjk_unicode61" -> sqlite3_cjkunicode_init).  It is for programs
** that link the sources in directly, such as the fuzz harness, and it is the
** one list of what the shared library exports.
**
** All four entry points have SQLite's loadable-extension signature.  Our
** tables use the tokenizer name "hermes_fts_cjk"; the first three also
** register it as "cjk_unicode61" where no library has taken that name.
**   sqlite3_cjkunicode_init  the name SQLite derives from "cjk_unicode61.so";
**                            strict: any failure is reported.
**   sqlite3_ftscjk_init,
**   sqlite3_fts5_cjk_init    aliases, for hosts that load the file under the
**                            name libfts5_cjk (Hermes Agent's
**                            HERMES_FTS5_CJK_SO).
**   hermes_fts_auto_init     lenient, for sqlite3_auto_extension(): registers
**                            what it can and never fails a connection; no
**                            cjk_unicode61 alias (it runs on the host's own
**                            connections).
*/
#ifndef HERMES_FTS_H
#define HERMES_FTS_H

#include <sqlite3.h>

/* The entry points are the only symbols the library exports; everything
** else is hidden (-fvisibility=hidden, and no dllexport on Windows). */
#if defined(_WIN32)
#define HERMES_FTS_API __declspec(dllexport)
#elif defined(__GNUC__)
#define HERMES_FTS_API __attribute__((visibility("default")))
#else
#define HERMES_FTS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

HERMES_FTS_API int sqlite3_cjkunicode_init(sqlite3 *db, char **pzErrMsg,
                                           const sqlite3_api_routines *pApi);
HERMES_FTS_API int sqlite3_ftscjk_init(sqlite3 *db, char **pzErrMsg,
                                       const sqlite3_api_routines *pApi);
HERMES_FTS_API int sqlite3_fts5_cjk_init(sqlite3 *db, char **pzErrMsg,
                                         const sqlite3_api_routines *pApi);
HERMES_FTS_API int hermes_fts_auto_init(sqlite3 *db, char **pzErrMsg,
                                        const sqlite3_api_routines *pApi);

#ifdef __cplusplus
}
#endif

#endif /* HERMES_FTS_H */
