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
    pub series: Vec<Series>,
}

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
    let (y0, y1) = span(ys(), chart.y_log);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let ticks = chart.x_ticks.clone();
        let r = match (chart.x_log, chart.y_log, ticks) {
            (true, false, Some(t)) => draw(
                &root,
                chart,
                (x0..x1).log_scale().with_key_points(t),
                y0..y1,
            ),
            (true, true, Some(t)) => draw(
                &root,
                chart,
                (x0..x1).log_scale().with_key_points(t),
                (y0..y1).log_scale(),
            ),
            (false, false, _) => draw(&root, chart, x0..x1, y0..y1),
            (true, false, None) => draw(&root, chart, (x0..x1).log_scale(), y0..y1),
            (false, true, _) => draw(&root, chart, x0..x1, (y0..y1).log_scale()),
            (true, true, None) => draw(&root, chart, (x0..x1).log_scale(), (y0..y1).log_scale()),
        };
        r.map_err(|e| format!("cannot draw chart `{}`: {e}", chart.title))?;
        root.present()
            .map_err(|e| format!("cannot draw chart `{}`: {e}", chart.title))?;
    }
    Ok(svg)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
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
    ctx.configure_mesh()
        .x_desc(chart.x_desc.as_str())
        .y_desc(chart.y_desc.as_str())
        .x_label_formatter(&fmt)
        .y_label_formatter(&y_fmt)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 15))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .bold_line_style(RGBColor(0xd0, 0xd0, 0xd0))
        .draw()
        .map_err(err)?;
    for s in &chart.series {
        let color = PALETTE[s.color % PALETTE.len()];
        let mut pts = s.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let style = color.stroke_width(3);
        // A short stroke in the legend marks a dashed series, a long one a solid series.
        let len = if s.dashed { 8 } else { 22 };
        let legend = move |(x, y): (i32, i32)| PathElement::new(vec![(x, y), (x + len, y)], style);
        if s.dashed {
            ctx.draw_series(DashedLineSeries::new(pts.clone(), 10, 6, style))
                .map_err(err)?
                .label(s.name.as_str())
                .legend(legend);
        } else {
            ctx.draw_series(LineSeries::new(pts.clone(), style))
                .map_err(err)?
                .label(s.name.as_str())
                .legend(legend);
        }
        ctx.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(err)?;
        for &(x, lo, hi) in &s.bars {
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
