#ifndef HESSFIT_FITTING_H_
#define HESSFIT_FITTING_H_
/* The hessfit fitting layer (libhessfit_fitting, C11): units, element data, status codes,
 * readers for QM reference data and vibrational analysis. */
#include "hessfit_elements.h"
#include "hessfit_io.h"
#include "hessfit_status.h"
#include "hessfit_units.h"
#include "hessfit_vib.h"
#endif
