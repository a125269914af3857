/* conduct: fingerprint, record, profile, run, record the end (conduct.h). */
#include "experiment/conduct.h"
#include "experiment/experiment.h"
#include "experiment/record.h"
#include "experiment/variants.h"
#include "experiment/profiling.h"

int experiment_conduct(struct experiment_config *cfg, struct store *store, const char *kind,
                       int64_t resume_id, bool profile, int64_t profile_freq,
                       struct experiment_result *res, bool *ran)
{
    *ran = false;
    if (experiment_fingerprint(cfg) < 0)
        return -1;
    if (resume_id ? experiment_record_resume(cfg, store, resume_id, kind, NULL) < 0
                  : experiment_record_begin(cfg, store, kind, NULL) < 0)
        return -1;
    if (profile && experiment_profile_setup(cfg, store, profile_freq) < 0)
        return -1;
    *ran = true;
    int run_rc = experiment_run(cfg, store, res);
    if (experiment_record_finish(cfg, store, res, run_rc) < 0 && run_rc == 0)
        run_rc = -1;
    return run_rc;
}
