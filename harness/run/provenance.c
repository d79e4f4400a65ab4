/* What produced a run's figures, gathered as the run goes, for its reports. */
#include "harness/run/provenance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/version.h"
#include "refs/gemm.h"
#include "refs/kernels.h"

struct hc_prov_builder {
    hc_provenance prov;
    hc_prov_net *nets;
    char (*digests)[65];
    hc_prov_backend *backends;
    char kernels[160];
    char *command;
    size_t cap_nets;
};

hc_prov_builder *hc_prov_builder_new(const hc_suite *s, const char *command, hc_err *err)
{
    hc_prov_builder *p = hc_calloc(1, sizeof *p, err, "provenance");
    if (!p)
        return NULL;
    p->cap_nets = s->n_nets;
    p->nets = hc_calloc(s->n_nets ? s->n_nets : 1, sizeof *p->nets, err, "provenance");
    p->digests = hc_calloc(s->n_nets ? s->n_nets : 1, sizeof *p->digests, err, "provenance");
    p->backends = hc_calloc(s->n_backends ? s->n_backends : 1, sizeof *p->backends, err, "provenance");
    if (!p->nets || !p->digests || !p->backends ||
        (command && !(p->command = strdup(command)) && hc_err_set(err, HC_ENOMEM, "out of memory"))) {
        hc_prov_builder_free(p);
        return NULL;
    }
    /* Every backend a case uses, in the suite's order; its engine once a case has run. */
    for (size_t b = 0; b < s->n_backends; b++) {
        int used = 0;
        for (size_t k = 0; k < s->n_cases; k++)
            used |= s->cases[k].backend == b;
        if (used)
            p->backends[p->prov.n_backends++].name = s->backends[b].name;
    }
    snprintf(p->kernels, sizeof p->kernels, "gemm %s, winograd %s, softmax %s, exp %s", hc_gemm_isa(),
             hc_wino_isa(), hc_softmax_isa(), hc_vexp_isa());
    p->prov.halfcheck = HC_VERSION;
    p->prov.engine_version = HC_ENGINE_VERSION;
    p->prov.kernels = p->kernels;
#ifdef HC_HAVE_CUDA
    p->prov.cuda = 1;
#endif
    p->prov.command = p->command;
    p->prov.nets = p->nets;
    p->prov.backends = p->backends;
    return p;
}

void hc_prov_builder_add_net(hc_prov_builder *p, const hc_net_cfg *nc, const char *sha256, int model_version)
{
    if (p->prov.n_nets >= p->cap_nets)
        return;
    size_t i = p->prov.n_nets++;
    snprintf(p->digests[i], sizeof p->digests[i], "%s", sha256);
    p->nets[i] = (hc_prov_net){.name = nc->name, .file = nc->model, .sha256 = p->digests[i],
                               .model_version = model_version};
}

void hc_prov_builder_engine(hc_prov_builder *p, const char *backend, char **engine)
{
    for (size_t b = 0; b < p->prov.n_backends; b++)
        if (*engine && !p->backends[b].engine && strcmp(p->backends[b].name, backend) == 0) {
            p->backends[b].engine = *engine;
            *engine = NULL;
        }
}

const hc_provenance *hc_prov_builder_get(const hc_prov_builder *p)
{
    return &p->prov;
}

void hc_prov_builder_free(hc_prov_builder *p)
{
    if (!p)
        return;
    for (size_t i = 0; p->backends && i < p->prov.n_backends; i++)
        free((char *)p->backends[i].engine);
    free(p->backends);
    free(p->nets);
    free(p->digests);
    free(p->command);
    free(p);
}
