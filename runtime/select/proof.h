/* proof.h - nothing runs unproved: the proof of a plan before its first use, for what no verification covered. */
#ifndef ST_PROOF_H
#define ST_PROOF_H

#include <stddef.h>

#include "st_sched.h"
#include "st_steptab.h"
#include "stitch.h"

/* Whether algorithm `algo` of `cat` is proved for `in` (this communicator's p, groups, roles, split ratio and the
 * call's root): by the range its emitted tables record (st_catalogue.verified_pmin..pmax), by the registry's
 * verification at init (`exact`: a catalogue compiled at run time, proved for this communicator's shape with every
 * root), or else by verifying it now, once per process for each distinct instantiation (proof.c). STITCH_OK, or
 * STITCH_ERR_CONFIG with the verifier's counterexample in why. A `require` that refuses `in` is left to the
 * instantiation, which reports it. */
stitch_status_t st_proof_check(const st_catalogue *cat, const st_algo *algo, const st_inst *in, int exact, char *why,
                               size_t len);

#endif
