/* stages: what every stage reads of the pipeline's shared state (stages.h), below the stages
 * and the pipeline that runs them: the builds the gate checks and the experiment measures.
 * Owns no state. */
#include "pgo/stages.h"
#include "util/util.h"

#include <assert.h>
#include <stdlib.h>

int pgo_measured_builds(const struct pgo_pipeline *p, const struct pgo_build ***out)
{
    int n = p->nbuilds;
    for (int g = 0; g < p->ngroups; g++)
        n += p->groups[g].nbuilds;
    const struct pgo_build **m = xcalloc((size_t)n + 1, sizeof(*m));
    const struct pgo_build *official = NULL;
    int k = 0;
    for (int g = -1; g < p->ngroups; g++) {
        const struct pgo_pipeline *gp = g < 0 ? p : &p->groups[g];
        for (int i = 0; i < gp->nbuilds; i++) {
            const struct pgo_build *b = &gp->builds[i];
            if (b->phase == BUILD_INSTRUMENTED || b->skip)
                continue;
            if (b->official)
                official = b;
            else
                m[k++] = b;
        }
    }
    if (official)
        m[k++] = official;
    assert(k <= n && (k == 0 || m[0] == &p->builds[0]));
    *out = m;
    return k;
}
