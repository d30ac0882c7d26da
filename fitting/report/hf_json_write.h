#ifndef HF_JSON_WRITE_H_
#define HF_JSON_WRITE_H_
/* JSON values written to an atomic file (hf_report_escape.c): the reports' writers, the fit
 * report (fitting/app) and the benchmarks' result files share them. */
#include "hessfit_atomic_file.h"
#include "hessfit_status.h"

/* s as a JSON string with its quotes (RFC 8259: '"', '\\' and control characters escaped, invalid
 * UTF-8 bytes as \ufffd); NULL writes null. */
hessfit_status hf_put_json_string(hessfit_atomic_file *out, const char *s);
/* x as a JSON number ("%.17g", an exact round trip); null when it is not finite. */
hessfit_status hf_put_json_number(hessfit_atomic_file *out, double x);
/* One member after others: ", \"key\": " and x as hf_put_json_number writes it. */
hessfit_status hf_put_json_number_member(hessfit_atomic_file *out, const char *key, double x);

#endif
