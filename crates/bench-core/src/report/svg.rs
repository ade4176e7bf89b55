//! Line charts as SVG (plotters' SVG backend): titled, with labelled axes (units in the
//! titles), optional log scales, one coloured line with point markers per series, and a
//! legend. No fonts or external programs are needed: the SVG carries text elements.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    /// (x, y) points; drawn in x order.
    pub points: Vec<(f64, f64)>,
    /// Index into the palette: series that belong together share a colour.
    pub color: usize,
    /// Dashed (e.g. p99 next to a solid p50 of the same colour).
    pub dashed: bool,
    /// Error bars: (x, low, high), e.g. the confidence interval of a median.
    pub bars: Vec<(f64, f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct Chart {
    /// The file name under `charts/`.
    pub file: String,
    /// What the chart shows, as the report's alt text.
    pub alt: String,
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub x_log: bool,
    pub y_log: bool,
    /// Label a log x axis at exactly these values (e.g. the writer counts measured).
    pub x_ticks: Option<Vec<f64>>,
    /// The y axis counts things: label whole numbers only.
    pub y_integer: bool,
    /// Where the legend goes: away from where the lines run.
    pub legend_left: bool,
    /// The series may lie on top of each other: draw them nested (widest first).
    pub nested: bool,
    pub series: Vec<Series>,
}

/// What a chart's error bars are, said under it when it has any.
pub const BARS_NOTE: &str = "error bars: the 95 % interval of the median over repetitions \
                             (their extremes, for up to 8)";

impl Series {
    /// A solid line.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>, color: usize) -> Series {
        Series {
            name: name.into(),
            points,
            color,
            dashed: false,
            bars: Vec::new(),
        }
    }

    /// A dashed line.
    pub fn dashed(name: impl Into<String>, points: Vec<(f64, f64)>, color: usize) -> Series {
        Series {
            dashed: true,
            ..Series::line(name, points, color)
        }
    }
}

impl Chart {
    /// A chart with both axes on log scales, the legend top right, and no series yet.
    pub fn log_log(file: &str, alt: String, title: String, x_desc: &str, y_desc: String) -> Chart {
        Chart {
            file: file.to_string(),
            alt,
            title,
            x_desc: x_desc.to_string(),
            y_desc,
            x_log: true,
            y_log: true,
            x_ticks: None,
            y_integer: false,
            legend_left: false,
            nested: false,
            series: Vec::new(),
        }
    }
}

/// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
];

pub const WIDTH: u32 = 900;
pub const HEIGHT: u32 = 560;

/// A number as an axis label: 1k, 10k, 1M for large values, few digits otherwise.
pub fn tick(v: f64) -> String {
    let a = v.abs();
    let (x, unit) = if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x == x.round() || x.abs() >= 10.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.1}")
    } else if x.abs() >= 0.01 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    };
    format!("{s}{unit}")
}

/// The span an axis shows: the data padded a little (by a factor on log scales).
fn span(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        // No data: an empty chart with a plain axis.
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        (lo / 1.6, hi * 1.6)
    } else {
        let pad = if hi > lo {
            (hi - lo) * 0.08
        } else {
            hi.abs().max(1.0) * 0.1
        };
        // Counts and rates start at zero when the data is all positive.
        let lo = if lo >= 0.0 { 0.0 } else { lo - pad };
        (lo, hi + pad)
    }
}

/// Labels for a log axis over `lo..hi`: 1, 2 and 5 of every decade in range, or every
/// digit when that gives fewer than three, so the whole range is labelled.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let ticks = |mults: &[f64]| -> Vec<f64> {
        let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (d0..=d1)
            .flat_map(|d| mults.iter().map(move |m| m * 10f64.powi(d)))
            .filter(|v| *v >= lo && *v <= hi)
            .collect()
    };
    let coarse = ticks(&[1.0, 2.0, 5.0]);
    if coarse.len() >= 3 {
        return coarse;
    }
    ticks(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
}

/// Points a log axis can show: positive ones (a zero or a missing figure leaves a gap).
fn shown(p: &(f64, f64), chart: &Chart) -> bool {
    let ok = |v: f64, log: bool| v.is_finite() && (!log || v > 0.0);
    ok(p.0, chart.x_log) && ok(p.1, chart.y_log)
}

/// Render a chart to an SVG document.
pub fn render(chart: &Chart) -> Result<String, String> {
    let xs = || {
        chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
    };
    let ys = || {
        chart.series.iter().flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.bars.iter().flat_map(|b| [b.1, b.2]))
        })
    };
    let (x0, x1) = span(xs(), chart.x_log);
    let (y0, mut y1) = span(ys(), chart.y_log);
    if chart.y_integer {
        // Counts: at least 0 to 1, so that whole numbers label the axis (all-zero counts
        // would otherwise span 0 to 0.1, with one label).
        y1 = y1.max(1.2);
    }
    // Labels for the log axes only (a linear axis labels itself).
    let x_ticks = || chart.x_ticks.clone().unwrap_or_else(|| log_ticks(x0, x1));
    let y_ticks = || log_ticks(y0, y1);
    let mut svg = String::new();
    {
        let whole = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        whole.fill(&WHITE).map_err(err)?;
        // Error bars are said under the chart, in a strip of their own.
        let root = if chart.series.iter().any(|s| !s.bars.is_empty()) {
            let (upper, lower) = whole.split_vertically(HEIGHT - 24);
            lower
                .draw(&Text::new(
                    BARS_NOTE,
                    (16, 2),
                    ("sans-serif", 13)
                        .into_font()
                        .color(&RGBColor(0x55, 0x55, 0x55)),
                ))
                .map_err(err)?;
            upper
        } else {
            whole.clone()
        };
        let xl = || (x0..x1).log_scale().with_key_points(x_ticks());
        let yl = || (y0..y1).log_scale().with_key_points(y_ticks());
        let r = match (chart.x_log, chart.y_log) {
            (true, true) => draw(&root, chart, xl(), yl()),
            (true, false) => draw(&root, chart, xl(), y0..y1),
            (false, true) => draw(&root, chart, x0..x1, yl()),
            (false, false) => draw(&root, chart, x0..x1, y0..y1),
        };
        r.map_err(|e| format!("cannot draw chart `{}`: {e}", chart.title))?;
        whole
            .present()
            .map_err(|e| format!("cannot draw chart `{}`: {e}", chart.title))?;
    }
    Ok(svg)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The runs of consecutive points a series can show, in x order: a point a log axis cannot
/// show breaks the line there.
fn runs(s: &Series, chart: &Chart) -> Vec<Vec<(f64, f64)>> {
    let mut pts = s.points.clone();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for p in pts {
        if shown(&p, chart) {
            out.last_mut().expect("a run").push(p);
        } else if !out.last().expect("a run").is_empty() {
            out.push(Vec::new());
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

/// A chart of whole numbers: one label per whole number up to 10 of them, so that no tick
/// goes unlabelled in between.
fn integer_labels(chart: &Chart) -> Option<usize> {
    let top = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max)
        .ceil();
    chart.y_integer.then(|| (top as usize + 1).clamp(2, 11))
}

/// A series' intervals: a vertical bar from low to high, capped at both ends.
fn error_bars<X, Y>(
    ctx: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    s: &Series,
    chart: &Chart,
    color: RGBColor,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for &(x, lo, hi) in s.bars.iter().filter(|b| shown(&(b.0, b.1), chart)) {
        let bar = color.stroke_width(2);
        ctx.draw_series(std::iter::once(PathElement::new(
            vec![(x, lo), (x, hi)],
            bar,
        )))
        .map_err(err)?;
        // Caps: short horizontal ticks at both ends, a few pixels wide.
        for y in [lo, hi] {
            let cap = plotters::element::EmptyElement::at((x, y))
                + PathElement::new(vec![(-5, 0), (5, 0)], bar);
            ctx.draw_series(std::iter::once(cap)).map_err(err)?;
        }
    }
    Ok(())
}

fn draw<X, Y>(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    chart: &Chart,
    x: X,
    y: Y,
) -> Result<(), String>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    root.fill(&WHITE).map_err(err)?;
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(78)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    let fmt = |v: &f64| tick(*v);
    let y_fmt = |v: &f64| match chart.y_integer {
        true if (v - v.round()).abs() > 1e-9 => String::new(),
        true => tick(v.round()),
        false => tick(*v),
    };
    let mut mesh = ctx.configure_mesh();
    if let Some(labels) = integer_labels(chart) {
        mesh.y_labels(labels);
    }
    mesh.x_desc(chart.x_desc.as_str())
        .y_desc(chart.y_desc.as_str())
        .x_label_formatter(&fmt)
        .y_label_formatter(&y_fmt)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 15))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .bold_line_style(RGBColor(0xd0, 0xd0, 0xd0))
        .draw()
        .map_err(err)?;
    let n = chart.series.len();
    for (i, s) in chart.series.iter().enumerate() {
        let color = PALETTE[s.color % PALETTE.len()];
        // Series that may lie on each other (e.g. counts that are all zero) nest: the first
        // drawn widest, with the largest marker, so each stays visible around the next.
        let nest = if chart.nested { n - 1 - i } else { 0 };
        let style = color.stroke_width(3 + 3 * nest as u32);
        let size = 4 + 3 * nest as i32;
        // A short stroke in the legend marks a dashed series, a long one a solid series.
        let len = if s.dashed { 8 } else { 22 };
        for (k, run) in runs(s, chart).into_iter().enumerate() {
            let drawn = if s.dashed {
                ctx.draw_series(DashedLineSeries::new(run.clone(), 10, 6, style))
                    .map_err(err)?
            } else {
                ctx.draw_series(LineSeries::new(run.clone(), style))
                    .map_err(err)?
            };
            if k == 0 {
                drawn
                    .label(s.name.as_str())
                    .legend(move |(x, y): (i32, i32)| {
                        PathElement::new(vec![(x, y), (x + len, y)], style)
                    });
            }
            ctx.draw_series(run.iter().map(|&p| Circle::new(p, size, color.filled())))
                .map_err(err)?;
        }
        error_bars(&mut ctx, s, chart, color)?;
    }
    ctx.configure_series_labels()
        .position(if chart.legend_left {
            SeriesLabelPosition::UpperLeft
        } else {
            SeriesLabelPosition::UpperRight
        })
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(0xb0, 0xb0, 0xb0))
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(1000.0), "1k");
        assert_eq!(tick(1_000_000.0), "1M");
        assert_eq!(tick(250_000.0), "250k");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(8.0), "8");
    }

    #[test]
    fn log_axes_are_labelled_across_their_range() {
        assert_eq!(log_ticks(0.5, 30.0), [0.5, 1.0, 2.0, 5.0, 10.0, 20.0]);
        // Less than a decade: every digit.
        assert_eq!(log_ticks(22.0, 65.0), [30.0, 40.0, 50.0, 60.0]);
        let t = log_ticks(0.02, 0.9);
        assert!((t[0] - 0.02).abs() < 1e-12, "{t:?}");
        assert!(t.iter().any(|v| (v - 0.5).abs() < 1e-12), "{t:?}");
        // A range a log axis cannot have gives no labels (and no endless loop).
        assert!(log_ticks(0.0, 5.0).is_empty());
    }

    #[test]
    fn zeros_on_a_log_axis_leave_gaps() {
        let mut chart = Chart::log_log("c.svg", "alt".into(), "t".into(), "x", "y".into());
        let s = Series::line("s", vec![(1.0, 2.0), (2.0, 0.0), (3.0, 4.0), (4.0, 5.0)], 0);
        assert_eq!(
            runs(&s, &chart),
            [vec![(1.0, 2.0)], vec![(3.0, 4.0), (4.0, 5.0)]]
        );
        chart.y_log = false;
        assert_eq!(runs(&s, &chart).len(), 1, "a linear axis shows the zero");
        chart.series = vec![s];
        let svg = render(&chart).unwrap();
        assert!(svg.starts_with("<svg"));
    }

    #[test]
    fn spans_pad_the_data() {
        let (lo, hi) = span([1.0, 3.0].into_iter(), false);
        assert_eq!(lo, 0.0);
        assert!((hi - 3.16).abs() < 1e-9);
        let (lo, hi) = span([10.0, 1000.0].into_iter(), true);
        assert!(lo < 10.0 && hi > 1000.0);
        // Zeros cannot be on a log scale: they are left out of its span.
        let (lo, _) = span([0.0, 5.0].into_iter(), true);
        assert!(lo > 0.0);
        assert_eq!(span(std::iter::empty(), true), (1.0, 10.0));
    }
}
