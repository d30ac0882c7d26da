#ifndef HESSFIT_WINDOWS_EXPORT_H_
#define HESSFIT_WINDOWS_EXPORT_H_
/* Symbol visibility for the hessfit plugin libraries (only Windows needs decoration). */
#if defined(_MSC_VER)
#  if defined(HESSFIT_BUILDING_SHARED_LIBRARY)
#    define OPENMM_EXPORT_HESSFIT __declspec(dllexport)
#  else
#    define OPENMM_EXPORT_HESSFIT __declspec(dllimport)
#  endif
#else
#  define OPENMM_EXPORT_HESSFIT __attribute__((visibility("default")))
#endif
#endif
