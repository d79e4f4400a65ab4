/* JUnit XML of a run (libxml2) for CI test reporters. */
#include "reports/junit.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"

#define X(s) ((const xmlChar *)(s))

static void prop(xmlNodePtr props, const char *name, const char *value)
{
    xmlNodePtr p = xmlNewChild(props, NULL, X("property"), NULL);
    xmlNewProp(p, X("name"), X(name));
    xmlNewProp(p, X("value"), X(value));
}

static void propf(xmlNodePtr props, const char *name, double v)
{
    char buf[64];
    prop(props, name, hc_num_format(buf, sizeof buf, "%.17g", v));
}

static void setf(xmlNodePtr n, const char *name, const char *fmt, double v)
{
    char buf[64];
    xmlNewProp(n, X(name), X(hc_num_format(buf, sizeof buf, fmt, v)));
}

/* The signed errors (bias.h) and the top-move agreement of a result's stats. */
static void bias_properties(xmlNodePtr props, const hc_stats *s)
{
    char name[128];
    for (int m = 0; m < HC_M_COUNT; m++) {
        const hc_bias_stats *b = &s->bias[m];
        if (!b->n)
            continue;
        snprintf(name, sizeof name, "%s.bias.mean", hc_metric_infos[m].name);
        propf(props, name, b->mean);
        snprintf(name, sizeof name, "%s.bias.stdErr", hc_metric_infos[m].name);
        propf(props, name, b->se);
        for (int p = 0; p < HC_BP_COUNT; p++) {
            snprintf(name, sizeof name, "%s.bias.%s", hc_metric_infos[m].name, hc_bias_pct_names[p]);
            propf(props, name, b->p[p]);
        }
        snprintf(name, sizeof name, "%s.bias.systematic", hc_metric_infos[m].name);
        prop(props, name, b->systematic ? "true" : "false");
    }
    if (s->top_agree.n)
        propf(props, "topMoveAgreement", hc_top_agree_rate(&s->top_agree));
}

static void case_properties(xmlNodePtr tc, const hc_result *r, size_t tier)
{
    xmlNodePtr props = xmlNewChild(tc, NULL, X("properties"), NULL);
    prop(props, "net", r->net ? r->net : "");
    prop(props, "board", r->board ? r->board : "");
    prop(props, "backend", r->backend ? r->backend : "");
    prop(props, "mode", r->mode ? r->mode : "");
    if (tier < r->n_tiers)
        prop(props, "tier", r->tiers[tier].name);
    if (r->nn_x_len > 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%dx%d", r->nn_x_len, r->nn_y_len);
        prop(props, "nnBuffer", buf);
        snprintf(buf, sizeof buf, "%d", r->max_batch_size);
        prop(props, "maxBatchSize", buf);
        propf(props, "policyOptimism", r->policy_optimism);
        propf(props, "playoutDoublingAdvantage", r->pda);
        propf(props, "policyTemperature", r->policy_temperature);
    }
    if (r->has_engine) {
        /* What the external engine cost (unknown figures are left out). */
        const hc_engine_stats *e = &r->engine;
        double pps = hc_result_engine_pos_per_s(r);
        if (e->peak_rss_kib >= 0)
            propf(props, "engine.peakRssKiB", e->peak_rss_kib);
        if (pps >= 0)
            propf(props, "engine.positionsPerSecond", pps);
        if (e->avg_batch >= 0) {
            propf(props, "engine.avgBatchSize", e->avg_batch);
            propf(props, "engine.nnRows", (double)e->nn_rows);
            propf(props, "engine.nnBatches", (double)e->nn_batches);
        }
        if (e->max_batch > 0)
            propf(props, "engine.maxBatchSize", (double)e->max_batch);
        propf(props, "engine.processes", (double)e->engines);
        if (e->version[0])
            prop(props, "engine.version", e->version);
    }
    if (!r->stats)
        return;
    char name[96], buf[64];
    snprintf(buf, sizeof buf, "%zu", r->stats->n_positions);
    prop(props, "positions", buf);
    for (int m = 0; m < HC_M_COUNT; m++) {
        const hc_metric_stats *ms = &r->stats->m[m];
        for (int p = 0; p < HC_P_COUNT; p++) {
            snprintf(name, sizeof name, "%s.%s", hc_metric_infos[m].name, hc_pct_names[p]);
            propf(props, name, ms->v[p]);
        }
        snprintf(name, sizeof name, "%s.maxPosition", hc_metric_infos[m].name);
        snprintf(buf, sizeof buf, "%zu", ms->max_pos);
        prop(props, name, buf);
        /* What reading rounded outputs can add to this metric (only for a backend declaring it). */
        if (r->stats->res[m] > 0) {
            snprintf(name, sizeof name, "%s.resolution", hc_metric_infos[m].name);
            propf(props, name, r->stats->res[m]);
        }
    }
    const hc_resolution *or = &r->stats->out_res;
    if (or->winrate > 0 || or->score > 0 || or->policy > 0 || or->ownership > 0) {
        propf(props, "outputResolution.winrate", or->winrate);
        propf(props, "outputResolution.score", or->score);
        propf(props, "outputResolution.policy", or->policy);
        propf(props, "outputResolution.ownership", or->ownership);
    }
    bias_properties(props, r->stats);
    if (r->n_skipped > 0) {
        snprintf(buf, sizeof buf, "%zu", r->n_skipped);
        prop(props, "skippedPositions", buf);
    }
    if (r->outcome == HC_OUT_CHECKED && r->checks && tier < r->n_tiers) {
        const hc_tier_check *c = &r->checks[tier];
        if (c->worst_all_metric >= 0) {
            snprintf(buf, sizeof buf, "%s %s", hc_metric_infos[c->worst_all_metric].name, hc_pct_names[c->worst_all_pct]);
            prop(props, "closestMargin.metric", buf);
            propf(props, "closestMargin.ratio", c->worst_all_ratio);
        }
    }
}

/* A result's wall time in whole milliseconds: testcase and testsuite times are sums of these
 * integers, so that a viewer adding up the testcases gets the suite's time to the digit. */
static long long time_ms(const hc_result *r)
{
    return r->seconds > 0 ? llround(r->seconds * 1000.0) : 0;
}

static void set_ms(xmlNodePtr n, long long ms)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%lld.%03lld", ms / 1000, ms % 1000);
    xmlNewProp(n, X("time"), X(buf));
}

/* Net and board lead the name: viewers that show only names would otherwise lose them. */
static void case_name(char *buf, size_t len, const hc_result *r, const char *rest)
{
    snprintf(buf, len, "net=%s board=%s backend=%s mode=%s%s", r->net ? r->net : "", r->board ? r->board : "",
             r->backend ? r->backend : "", r->mode ? r->mode : "", rest);
}

/* ms: the time put on this testcase; a result's time goes on its first tier's testcase only,
 * so a result checked against several tiers is not counted once per tier. */
static void add_case(xmlNodePtr suite, const hc_result *r, size_t tier, long long ms, int counts[4])
{
    char name[1024], cls[512], rest[96];
    snprintf(rest, sizeof rest, " tier=%s", tier < r->n_tiers ? r->tiers[tier].name : "-");
    case_name(name, sizeof name, r, rest);
    snprintf(cls, sizeof cls, "%s.%s", r->net ? r->net : "", r->board ? r->board : "");
    xmlNodePtr tc = xmlNewChild(suite, NULL, X("testcase"), NULL);
    xmlNewProp(tc, X("name"), X(name));
    xmlNewProp(tc, X("classname"), X(cls));
    set_ms(tc, ms);
    counts[0]++;
    case_properties(tc, r, tier);
    if (r->outcome == HC_OUT_SKIPPED) {
        xmlNodePtr s = xmlNewChild(tc, NULL, X("skipped"), NULL);
        xmlNewProp(s, X("message"), X(r->message ? r->message : "skipped"));
        counts[3]++;
    } else if (hc_result_is_error(r)) {
        char buf[400];
        const char *msg = r->outcome == HC_OUT_ERROR ? (r->message ? r->message : "backend error")
                                                     : hc_result_nonfinite_text(r, buf, sizeof buf);
        char full[4600];
        if (r->outcome != HC_OUT_ERROR && r->message) { /* the command that reruns the case */
            snprintf(full, sizeof full, "%s; %s", msg, r->message);
            msg = full;
        }
        xmlNodePtr e = xmlNewChild(tc, NULL, X("error"), NULL);
        xmlNewProp(e, X("message"), X(msg));
        xmlNewProp(e, X("type"), X(r->outcome == HC_OUT_ERROR ? "BackendError" : "NonFinite"));
        xmlNodeAddContent(e, X(msg));
        counts[2]++;
    } else if (tier < r->n_tiers && r->checks && !r->checks[tier].pass) {
        const hc_tier_check *c = &r->checks[tier];
        char msg[4600], val[64], lim[64];
        int m = c->first_fail_metric, p = c->first_fail_pct;
        char resb[96] = "";
        if (m < 0 && c->first_bias_fail >= 0) { /* only bias limits failed */
            char line[512];
            snprintf(msg, sizeof msg, "tier %s: %d of %d limits exceeded; first: %s", r->tiers[tier].name, c->n_failed,
                     c->n_checked, hc_bias_limit_text(r, tier, c->first_bias_fail, line, sizeof line));
        } else {
            if (r->stats->res[m] > 0) {
                char rv[64];
                snprintf(resb, sizeof resb, " + resolution %s", hc_metric_format(m, r->stats->res[m], rv, sizeof rv));
            }
            snprintf(msg, sizeof msg, "tier %s: %d of %d limits exceeded; first: %s %s %s > %s%s", r->tiers[tier].name,
                     c->n_failed, c->n_checked, hc_metric_infos[m].name, hc_pct_names[p],
                     hc_metric_format(m, r->stats->m[m].v[p], val, sizeof val),
                     hc_limit_format(&r->tiers[tier], m, p, lim, sizeof lim), resb);
        }
        if (r->message) /* the command that reruns the case */
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "; %s", r->message);
        xmlNodePtr f = xmlNewChild(tc, NULL, X("failure"), NULL);
        xmlNewProp(f, X("message"), X(msg));
        xmlNewProp(f, X("type"), X("TierExceeded"));
        char *text = hc_result_failure_text(r, tier);
        if (text)
            xmlNodeAddContent(f, X(text));
        free(text);
        counts[1]++;
    }
}

/* The positions a checked result left out (the backend could not express them): a skipped
 * testcase of their own, so that nothing is dropped silently. */
static void add_skipped_positions(xmlNodePtr suite, const hc_result *r, int counts[4])
{
    char name[1024], cls[512];
    case_name(name, sizeof name, r, "/unexpressible");
    snprintf(cls, sizeof cls, "%s.%s", r->net ? r->net : "", r->board ? r->board : "");
    xmlNodePtr tc = xmlNewChild(suite, NULL, X("testcase"), NULL);
    xmlNewProp(tc, X("name"), X(name));
    xmlNewProp(tc, X("classname"), X(cls));
    set_ms(tc, 0);
    xmlNodePtr props = xmlNewChild(tc, NULL, X("properties"), NULL);
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", r->n_skipped);
    prop(props, "skippedPositions", buf);
    xmlNodePtr sk = xmlNewChild(tc, NULL, X("skipped"), NULL);
    xmlNewProp(sk, X("message"), X(r->skip_message ? r->skip_message : "positions skipped"));
    counts[0]++;
    counts[3]++;
}

/* The provenance (results.h) as the testsuite's properties: halfcheck's, the command, the
 * suite's net as evaluated, each engine; "job.K." before the names for the jobs of a merge. */
static void suite_provenance(xmlNodePtr suite, const hc_results *rs, const char *net)
{
    if (rs->n_prov == 0)
        return;
    /* The schema wants properties before the testcases. */
    xmlNodePtr props = xmlNewNode(NULL, X("properties"));
    if (suite->children)
        xmlAddPrevSibling(suite->children, props);
    else
        xmlAddChild(suite, props);
    for (size_t k = 0; k < rs->n_prov; k++) {
        const hc_provenance *p = &rs->prov[k];
        char pre[64] = "", name[400], v[64];
        if (rs->n_prov > 1)
            snprintf(pre, sizeof pre, "job.%zu.", k + 1);
#define PROP(KEY, VAL) (snprintf(name, sizeof name, "%s%s", pre, KEY), prop(props, name, VAL))
        if (p->job)
            PROP("job", p->job);
        if (p->host)
            PROP("host", p->host);
        if (p->device)
            PROP("device", p->device);
        PROP("halfcheck.version", p->halfcheck ? p->halfcheck : "");
        snprintf(v, sizeof v, "%d", p->engine_version);
        PROP("halfcheck.engine", v);
        PROP("halfcheck.kernels", p->kernels ? p->kernels : "");
        PROP("halfcheck.cuda", p->cuda ? "built in" : "not built in");
        if (p->command)
            PROP("command", p->command);
        for (size_t i = 0; i < p->n_nets; i++) {
            if (strcmp(p->nets[i].name ? p->nets[i].name : "", net ? net : ""))
                continue;
            PROP("net.file", p->nets[i].file ? p->nets[i].file : "");
            PROP("net.sha256", p->nets[i].sha256 ? p->nets[i].sha256 : "");
            snprintf(v, sizeof v, "%d", p->nets[i].model_version);
            PROP("net.modelVersion", v);
        }
        for (size_t i = 0; i < p->n_backends; i++) {
            if (!p->backends[i].engine)
                continue;
            char key[300];
            snprintf(key, sizeof key, "backend.%s.engine", p->backends[i].name ? p->backends[i].name : "");
            PROP(key, p->backends[i].engine);
        }
#undef PROP
    }
}

int hc_junit_write(const hc_results *rs, const char *path, hc_err *err)
{
    xmlDocPtr doc = xmlNewDoc(X("1.0"));
    xmlNodePtr root = xmlNewNode(NULL, X("testsuites"));
    xmlDocSetRootElement(doc, root);
    xmlNewProp(root, X("name"), X(rs->suite ? rs->suite : "halfcheck"));
    char *done = calloc(rs->n ? rs->n : 1, 1);
    if (!done) {
        xmlFreeDoc(doc);
        return hc_err_set(err, HC_ENOMEM, "out of memory writing %s", path);
    }
    int total[4] = {0, 0, 0, 0};
    long long total_ms = 0;
    for (size_t i = 0; i < rs->n; i++) {
        if (done[i])
            continue;
        const hc_result *a = &rs->items[i];
        char sname[512];
        snprintf(sname, sizeof sname, "%s.%s", a->net ? a->net : "", a->board ? a->board : "");
        xmlNodePtr suite = xmlNewChild(root, NULL, X("testsuite"), NULL);
        xmlNewProp(suite, X("name"), X(sname));
        if (rs->timestamp)
            xmlNewProp(suite, X("timestamp"), X(rs->timestamp));
        int counts[4] = {0, 0, 0, 0}; /* tests, failures, errors, skipped */
        long long ms = 0;
        for (size_t j = i; j < rs->n; j++) {
            const hc_result *b = &rs->items[j];
            if (done[j] || strcmp(a->net ? a->net : "", b->net ? b->net : "") ||
                strcmp(a->board ? a->board : "", b->board ? b->board : ""))
                continue;
            done[j] = 1;
            ms += time_ms(b);
            if (b->n_tiers == 0)
                add_case(suite, b, 0, time_ms(b), counts);
            for (size_t t = 0; t < b->n_tiers; t++)
                add_case(suite, b, t, t == 0 ? time_ms(b) : 0, counts);
            if (b->n_skipped > 0)
                add_skipped_positions(suite, b, counts);
        }
        suite_provenance(suite, rs, a->net);
        setf(suite, "tests", "%.0f", counts[0]);
        setf(suite, "failures", "%.0f", counts[1]);
        setf(suite, "errors", "%.0f", counts[2]);
        setf(suite, "skipped", "%.0f", counts[3]);
        set_ms(suite, ms);
        for (int k = 0; k < 4; k++)
            total[k] += counts[k];
        total_ms += ms;
    }
    free(done);
    if (rs->interrupted) {
        /* A run cut short must not read as a clean one in a CI's test report. */
        xmlNodePtr suite = xmlNewChild(root, NULL, X("testsuite"), NULL);
        xmlNewProp(suite, X("name"), X("halfcheck"));
        xmlNodePtr tc = xmlNewChild(suite, NULL, X("testcase"), NULL);
        xmlNewProp(tc, X("name"), X("interrupted"));
        xmlNewProp(tc, X("classname"), X("halfcheck"));
        setf(tc, "time", "%.3f", 0.0);
        xmlNodePtr e = xmlNewChild(tc, NULL, X("error"), NULL);
        const char *msg = "the run was interrupted (SIGINT or SIGTERM): only the cases that finished are reported";
        xmlNewProp(e, X("message"), X(msg));
        xmlNewProp(e, X("type"), X("Interrupted"));
        setf(suite, "tests", "%.0f", 1.0);
        setf(suite, "failures", "%.0f", 0.0);
        setf(suite, "errors", "%.0f", 1.0);
        setf(suite, "skipped", "%.0f", 0.0);
        setf(suite, "time", "%.3f", 0.0);
        total[0]++;
        total[2]++;
    }
    setf(root, "tests", "%.0f", total[0]);
    setf(root, "failures", "%.0f", total[1]);
    setf(root, "errors", "%.0f", total[2]);
    setf(root, "skipped", "%.0f", total[3]);
    set_ms(root, total_ms);

    xmlChar *mem = NULL;
    int len = 0;
    xmlDocDumpFormatMemoryEnc(doc, &mem, &len, "UTF-8", 1);
    xmlFreeDoc(doc);
    if (!mem)
        return hc_err_set(err, HC_ENOMEM, "could not format %s", path);
    hc_ostream *o = hc_ostream_open(path, err);
    if (!o) {
        xmlFree(mem);
        return -1;
    }
    int rc = hc_ostream_write(o, mem, (size_t)len, err);
    xmlFree(mem);
    if (rc) {
        hc_ostream_abort(o);
        return -1;
    }
    return hc_ostream_commit(o, err);
}
