#pragma once
// The page `tdbg report` writes, all of it: one self-contained HTML file drawn
// from the numbers cmd_report.cpp collected from a run. It knows nothing about
// trials, so tests can feed it made-up data. The pieces live in report/, one
// responsibility each, every one compiling on its own:
//
//   model.hpp       the document: the plain data the page shows
//   page_text.hpp   text: escaping, values, differences, tick labels, lists of steps
//   palette.hpp     colours: the series, the rules' marks, the heatmap shades, dashes
//   axes.hpp        ticks, scales, the value axis, the shared step axis
//   context.hpp     what every chart shares: series colours, rule bands, divergence
//   svg.hpp         SVG primitives: pixel coordinates, text, lines, rectangles
//   marks.hpp       the step axis's ticks, rule bands and divergence lines on a chart
//   line_chart.hpp  a reduction over steps, a line per mode and worker
//   heatmap.hpp     the distribution of a tensor's values over steps
//   timeline.hpp    the overview of saved steps and rule results
//   tables.hpp      the rules and runs tables, the diff box, a tensor's legend
//   assets.hpp      the inline stylesheet and script
//   page.hpp        the page: its cards, and render_html

#include "report/assets.hpp"
#include "report/axes.hpp"
#include "report/context.hpp"
#include "report/heatmap.hpp"
#include "report/line_chart.hpp"
#include "report/marks.hpp"
#include "report/model.hpp"
#include "report/page.hpp"
#include "report/page_text.hpp"
#include "report/palette.hpp"
#include "report/svg.hpp"
#include "report/tables.hpp"
#include "report/timeline.hpp"
