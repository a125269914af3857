/* html: `pgolab report --format=html`: one self-contained HTML file per experiment (or two,
 * compared) that opens offline in any current browser: the report's header and tables (the
 * markdown report, tables.c / versus.c, turned into HTML: the same cells, the same
 * statistics), and charts drawn by Chart.js (Debian's libjs-chart.js, read at report time
 * and inlined) from a JSON data block: tps vs threads per variant with CI whiskers, latency
 * percentile curves from the runs' stored histograms, every run's per-second timeline, the
 * trainer x workload heat map of a pgo experiment with several trainers, the system metrics
 * per variant, and the side-by-side CPU profiles when they were recorded. The page's CSS and
 * script are src/report/html_page.css and html_page.js, compiled in as strings (the Makefile
 * generates build/gen/report_page.h). Reads results only; output goes to the caller's
 * strbuf. */
#ifndef PGOLAB_REPORT_HTML_H
#define PGOLAB_REPORT_HTML_H

#include "model/model.h"
#include "util/strbuf.h"

/* Where Debian's libjs-chart.js puts the UMD build the page inlines. */
#define REPORT_CHARTJS_PATH "/usr/share/javascript/chart.js/chart.min.js"
#define REPORT_CHARTJS_PACKAGE "libjs-chart.js"

/* Read the chart library (REPORT_CHARTJS_PATH, or the test knob PGOLAB_CHARTJS's file) into
 * js. -1 with one line naming the file and the Debian package to install when it cannot be
 * read or is empty. */
int report_html_chartjs(struct strbuf *js);

/* The page of one stored experiment, appended to out. chartjs is the library's text
 * (report_html_chartjs); profiles is the text of the side-by-side CPU profiles
 * (experiment_profile_report) or NULL when none were recorded. */
void report_html_experiment(struct strbuf *out, const struct experiment_loaded *l,
                            const char *chartjs, const char *profiles);

/* The page of two stored experiments compared (report --compare=A,B): the comparison (its
 * environment differences first, then its tables) and each experiment's charts side by
 * side. */
void report_html_compare(struct strbuf *out, const struct experiment_loaded *a,
                         const struct experiment_loaded *b, const char *chartjs);

#endif
