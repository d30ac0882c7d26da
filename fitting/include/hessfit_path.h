#ifndef HESSFIT_PATH_H_
#define HESSFIT_PATH_H_
/* File-name helpers shared by the readers' dispatch and the command line. */
#ifdef __cplusplus
extern "C" {
#endif

/** 1 if the file name, without a trailing ".gz" (any case), ends with ext (any case, with its dot:
 * ".fld"); 0 otherwise. */
int hessfit_path_has_extension(const char *path, const char *ext);

#ifdef __cplusplus
}
#endif
#endif
