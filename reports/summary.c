/* The per-net summary table (summary.h). */
#include "reports/summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/base/stream.h"
#include "harness/base/strbuf.h"

/* The table is built in an hc_strbuf. */

/* Markdown table text: '|' escaped, newlines as spaces. */
static void sb_cell(hc_strbuf *b, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            hc_strbuf_printf(b, "\\|");
        else if (*s == '\n' || *s == '\r')
            hc_strbuf_printf(b, " ");
        else
            hc_strbuf_printf(b, "%c", *s);
    }
}

static int same(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

/* What one net x backend x mode adds up to. */
typedef struct acc {
    int checked;
    double wr99, wrmax;
    long positions;
    double seconds;
    long rows, batches;
    int engine_batches; /* the engine formed them itself (hc_engine_batches_note) */
    int max_batch;      /* the board's maxBatchSize, over the cases */
    long engine_max;    /* the largest batch the engine will form, over the cases (-1 unknown) */
    int batching;
    size_t top_n, top_agree; /* the policy's top-move agreement, summed over the boards */
} acc;

static void fig_pct(hc_strbuf *b, const acc *a)
{
    char v1[64], v2[64];
    if (!a->checked) {
        hc_strbuf_printf(b, " - |");
        return;
    }
    hc_strbuf_printf(b, " %s / %s |", hc_metric_format(HC_M_WINRATE, a->wr99, v1, sizeof v1),
              hc_metric_format(HC_M_WINRATE, a->wrmax, v2, sizeof v2));
}

/* The share of positions whose top move is the reference's, over both modes: "99.1% / 98.7%". */
static void fig_top(hc_strbuf *b, const acc m[2])
{
    for (int k = 0; k < 2; k++) {
        hc_top_agree t = {.n = m[k].top_n, .agree = m[k].top_agree};
        if (t.n)
            hc_strbuf_printf(b, "%s%.1f%%", k ? " / " : " ", 100.0 * hc_top_agree_rate(&t));
        else
            hc_strbuf_printf(b, "%s-", k ? " / " : " ");
    }
    hc_strbuf_printf(b, " |");
}

char *hc_summary_markdown(const hc_results *rs, hc_err *err)
{
    hc_strbuf b = HC_STRBUF_INIT;
    /* Posted alone as a CI job's summary: an interrupted run must not read as a whole one. */
    if (rs->interrupted) {
        char *it = hc_results_interrupted_text(rs, "`", "`");
        if (!it) {
            hc_err_set(err, HC_ENOMEM, "out of memory for the summary");
            return NULL;
        }
        hc_strbuf_printf(&b, "**Interrupted**: %s\n\n", it);
        free(it);
    }
    hc_strbuf_printf(&b, "| net | model version | backend | winrateError 99%% / max, unbatched | winrateError 99%% / max, batched "
                  "| top move agrees, unbatched / batched "
                  "| verdict | engine peak RSS | positions/s unbatched | positions/s batched | rows per batch (batched) |\n"
                  "|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|\n");
    hc_strbuf notes = HC_STRBUF_INIT; /* batched cases far below their largest batch, after the table */
    unsigned char *done = calloc(rs->n ? rs->n : 1, 1);
    if (!done) {
        hc_err_set(err, HC_ENOMEM, "out of memory for the summary");
        hc_strbuf_free(&b);
        hc_strbuf_free(&notes);
        return NULL;
    }
    char note[300] = "";
    int n_notes = 0;
    for (size_t i = 0; i < rs->n; i++) {
        if (done[i])
            continue;
        const hc_result *r0 = &rs->items[i];
        acc m[2];
        memset(m, 0, sizeof m);
        m[0].engine_max = m[1].engine_max = -1;
        int mv = 0, n_pass = 0, n_fail = 0, n_err = 0, n_skip = 0;
        double rss = -1;
        for (size_t j = i; j < rs->n; j++) {
            const hc_result *r = &rs->items[j];
            if (!same(r->net, r0->net) || !same(r->backend, r0->backend))
                continue;
            done[j] = 1;
            if (r->model_version > 0)
                mv = r->model_version;
            int k = same(r->mode, "batched");
            if (r->outcome == HC_OUT_SKIPPED)
                n_skip++;
            else if (r->outcome == HC_OUT_ERROR || hc_result_is_error(r))
                n_err++;
            else if (hc_result_passed(r))
                n_pass++;
            else
                n_fail++;
            if (r->stats && r->outcome == HC_OUT_CHECKED && !hc_result_is_error(r)) {
                double v99 = r->stats->m[HC_M_WINRATE].v[HC_P_99], vmax = r->stats->m[HC_M_WINRATE].v[HC_P_MAX];
                if (!m[k].checked || v99 > m[k].wr99)
                    m[k].wr99 = v99;
                if (!m[k].checked || vmax > m[k].wrmax)
                    m[k].wrmax = vmax;
                m[k].checked = 1;
                m[k].top_n += r->stats->top_agree.n;
                m[k].top_agree += r->stats->top_agree.agree;
            }
            if (r->has_engine) {
                const hc_engine_stats *e = &r->engine;
                if (e->peak_rss_kib > rss)
                    rss = e->peak_rss_kib;
                if (e->positions > 0 && e->eval_seconds > 0) {
                    m[k].positions += e->positions;
                    m[k].seconds += e->eval_seconds;
                }
                if (e->nn_rows >= 0 && e->nn_batches > 0) {
                    m[k].rows += e->nn_rows;
                    m[k].batches += e->nn_batches;
                    if (e->max_batch > m[k].engine_max)
                        m[k].engine_max = e->max_batch;
                    m[k].batching |= e->batching;
                }
                if (e->engine_batches) {
                    m[k].engine_batches = 1;
                    if (r->max_batch_size > m[k].max_batch)
                        m[k].max_batch = r->max_batch_size;
                }
            }
        }
        hc_strbuf_printf(&b, "| ");
        sb_cell(&b, r0->net);
        if (mv > 0)
            hc_strbuf_printf(&b, " | %d | ", mv);
        else
            hc_strbuf_printf(&b, " | - | ");
        sb_cell(&b, r0->backend);
        hc_strbuf_printf(&b, " |");
        fig_pct(&b, &m[0]);
        fig_pct(&b, &m[1]);
        fig_top(&b, m);
        /* The worst outcome decides; the others are counted so nothing hides. */
        const char *verdict = n_err ? "**ERROR**" : n_fail ? "**FAIL**" : n_pass ? "PASS" : "skipped";
        hc_strbuf_printf(&b, " %s (%d passed", verdict, n_pass);
        if (n_fail)
            hc_strbuf_printf(&b, ", %d failed", n_fail);
        if (n_err)
            hc_strbuf_printf(&b, ", %d errors", n_err);
        if (n_skip)
            hc_strbuf_printf(&b, ", %d skipped", n_skip);
        hc_strbuf_printf(&b, ") |");
        if (rss >= 0)
            hc_strbuf_printf(&b, " %.0f MiB |", rss / 1024.0);
        else
            hc_strbuf_printf(&b, " - |");
        for (int k = 0; k < 2; k++) {
            if (m[k].seconds > 0)
                hc_strbuf_printf(&b, " %.1f |", (double)m[k].positions / m[k].seconds);
            else
                hc_strbuf_printf(&b, " - |");
        }
        /* Beside the batch counts: batches the engine formed itself may come out otherwise on a
         * rerun (a footnote below the table says so). */
        const char *mark = m[1].engine_batches ? " †" : "";
        if (m[1].batches > 0 && m[1].engine_max > 0)
            hc_strbuf_printf(&b, " %.2f of %ld%s |\n", (double)m[1].rows / (double)m[1].batches, m[1].engine_max, mark);
        else if (m[1].batches > 0)
            hc_strbuf_printf(&b, " %.2f%s |\n", (double)m[1].rows / (double)m[1].batches, mark);
        else
            hc_strbuf_printf(&b, " -%s |\n", mark);
        char far[160];
        if (hc_engine_batch_note(m[1].batching, m[1].rows, m[1].batches, m[1].engine_max, far, sizeof far) > 0) {
            hc_strbuf_printf(&notes, "- ");
            sb_cell(&notes, r0->net);
            hc_strbuf_printf(&notes, ", ");
            sb_cell(&notes, r0->backend);
            hc_strbuf_printf(&notes, ", batched: %s\n", far);
        }
        if (m[1].engine_batches)
            n_notes++;
        if (m[1].engine_batches && !note[0]) {
            hc_result one = *r0;
            one.has_engine = 1;
            one.engine = hc_engine_stats_unknown();
            one.engine.engine_batches = 1;
            one.engine.nn_batches = m[1].batches;
            one.engine.max_batch = m[1].engine_max;
            one.max_batch_size = m[1].max_batch;
            hc_engine_batches_note(&one, note, sizeof note);
        }
    }
    if (n_notes)
        hc_strbuf_printf(&b, "\n† %s%s.\n", note,
                         n_notes > 1 ? " (the first such row's count; each row's own in report.md)" : "");
    free(done);
    char *nt = hc_strbuf_take(&notes, NULL);
    if (nt && nt[0])
        hc_strbuf_printf(&b, "\n%s", nt);
    free(nt);
    /* A failing case whose outputs are other positions' says so under the table. */
    int any = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const hc_result *r = &rs->items[i];
        if (r->n_diag == 0)
            continue;
        char *d = hc_diag_text(r->diag, r->n_diag, 3);
        hc_strbuf_printf(&b, "%s- ", any++ ? "" : "\n");
        sb_cell(&b, r->net);
        hc_strbuf_printf(&b, " · ");
        sb_cell(&b, r->board);
        hc_strbuf_printf(&b, " · ");
        sb_cell(&b, r->backend);
        hc_strbuf_printf(&b, " · %s: ", r->mode ? r->mode : "");
        sb_cell(&b, d ? d : "");
        hc_strbuf_printf(&b, "\n");
        free(d);
    }
    char *text = hc_strbuf_take(&b, NULL);
    if (!text)
        hc_err_set(err, HC_ENOMEM, "out of memory for the summary");
    return text;
}

int hc_summary_write(const hc_results *rs, const char *path, hc_err *err)
{
    char *text = hc_summary_markdown(rs, err);
    if (!text)
        return -1;
    hc_ostream *o = hc_ostream_open(path, err);
    int rc = o ? 0 : -1;
    if (!rc)
        rc = hc_ostream_printf(o, err, "## halfcheck: %s, per net\n\n%s", rs->suite ? rs->suite : "results", text);
    free(text);
    if (!o)
        return -1;
    if (rc) {
        hc_ostream_abort(o);
        return -1;
    }
    return hc_ostream_commit(o, err);
}
