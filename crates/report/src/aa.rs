//! The A/A check (`[plan] aa`) in the report: its own section, labelled as the machine's
//! check, right before the verdicts; the words beside every verdict that say which
//! comparison is the check and which verdicts it makes suspect.

use crate::document::{Block, Frame, Inline, Media, Section, Span};
use crate::format;
use crate::model::{Cell, ComparisonRecord, Results};
use crate::table::{fixed, Table, Value};

/// A verdict in words with its A/A mark: "(A/A check)" on the check itself, "(suspect:
/// A/A)" on every verdict of an experiment whose check found a difference.
/// A comparison between servers of different kinds adds "(cross-server)".
pub fn verdict_text(k: &ComparisonRecord) -> String {
    let mut text = format::verdict_text(k);
    if k.cross_kind {
        text.push_str(" (cross-server)");
    }
    if k.aa {
        format!("{text} (A/A check)")
    } else if k.suspect {
        format!("{text} (suspect: A/A)")
    } else {
        text
    }
}

/// What the headline table's notes say of an A/A cell.
pub fn cell_note(r: &Results, c: &Cell) -> Option<String> {
    r.variants.iter().find(|v| v.aa && v.name == c.variant)?;
    Some(format!(
        "A/A machine check: {}'s binary again",
        r.plan.baseline.as_str()
    ))
}

/// The machine check in one sentence: what the A/A variant is, how it came out, and what
/// that means for the other verdicts.
pub fn sentence(r: &Results) -> Option<String> {
    let a = r.aa.as_ref()?;
    let at = format!(
        "{} x{}: ratio {}, CI [{}, {}]",
        a.workload,
        a.connections,
        fixed(a.ratio, 3),
        fixed(a.ci95[0], 3),
        fixed(a.ci95[1], 3)
    );
    let held_back = r
        .comparisons
        .iter()
        .filter(|k| k.aa && k.verdict == crate::model::Verdict::ClientBound)
        .count();
    let busy = r
        .comparisons
        .iter()
        .filter(|k| k.aa && k.verdict == crate::model::Verdict::MachineBusy)
        .count();
    Some(if a.differs() {
        format!(
            "Machine check (A/A): FAILED. {} runs {}'s binary again in sandboxes of its own, and it came out {} at {} of {} point(s) (first: {at}). Two sandboxes of one binary should never differ: every verdict here is suspect, marked \"suspect: A/A\".",
            a.variant, a.baseline, a.verdict, a.differ, a.comparisons
        )
    } else if busy > 0 {
        format!(
            "Machine check (A/A): no answer. {} runs {}'s binary again in sandboxes of its own, and other processes of the machine took the CPU at {busy} of {} point(s) (first shown: {at}): the machine is busy; quiet it, or give the server and the load CPUs of their own with [plan] cpus, and run again.",
            a.variant, a.baseline, a.comparisons
        )
    } else if held_back > 0 {
        format!(
            "Machine check (A/A): no answer. {} runs {}'s binary again in sandboxes of its own, and the load engine, not the server, set the pace at {held_back} of {} point(s) (first shown: {at}): there the check says nothing about the machine; give the load more client threads and run again.",
            a.variant, a.baseline, a.comparisons
        )
    } else {
        let floor = a
            .detectable
            .map(|d| {
                format!(
                    "; the machine's noise floor at this budget: ±{:.1}%, the smallest difference it could tell from none",
                    d * 100.0
                )
            })
            .unwrap_or_default();
        format!(
            "Machine check (A/A): passed. {} runs {}'s binary again in sandboxes of its own, and it came out neither faster nor slower at any of {} point(s) (furthest: {at}, {}){floor}.",
            a.variant, a.baseline, a.comparisons, a.verdict
        )
    })
}

/// The section: the sentence (every output, the terminal too), and on the page each A/A
/// comparison as the verdicts table shows it.
pub fn section(r: &Results) -> Option<Section> {
    let a = r.aa.as_ref()?;
    let line = sentence(r)?;
    let mut t = Table::new(
        "aa",
        &[
            "workload",
            "conns#",
            "ratio#",
            "CI",
            "p adjusted#",
            "detectable#",
            "verdict",
        ],
    );
    for k in r.comparisons.iter().filter(|k| k.aa) {
        t.push(vec![
            k.workload.clone().into(),
            k.connections.to_string().into(),
            fixed(k.ratio, 3).into(),
            format::ratio_ci_text(k).into(),
            fixed(k.p_adjusted, 4).into(),
            k.detectable
                .map(|d| format!("±{:.1}%", d * 100.0))
                .unwrap_or_else(|| "-".into())
                .into(),
            Value::Verdict(k.verdict, verdict_text(k)),
        ]);
    }
    Some(
        Section::new(
            "aa",
            "Machine check",
            Inline::new().text("Machine check (A/A: ").and(Span::Code(a.variant.clone())).text(" against ").and(Span::Code(a.baseline.clone())).text(")"),
        )
        .framed(if a.differs() { Frame::Warn } else { Frame::Plain })
        .with(Block::text(line).everywhere())
        .with(Block::Table(t).only(Media::PAGE))
        .with(Block::caption("The A/A variant is the baseline's binary, arguments and options, built or found once and started in a fresh sandbox per run, interleaved in the rounds like any variant; its comparison with the baseline takes part in the stopping rule and in the false-discovery-rate family, and never in --fail-on. Faster or slower here means the machine made a difference on its own.").only(Media::PAGE)),
    )
}

#[cfg(test)]
mod tests {
    use crate::model::{AaRecord, ComparisonRecord, Results, VariantRecord, Verdict};

    /// The sample with an A/A variant, its cell and its comparison (`verdict`); when that
    /// differs, the candidate's verdict marked suspect and the warning said.
    fn with_aa(verdict: Verdict) -> Results {
        let mut r = crate::tests::sample();
        let name = "gcc-O2~aa";
        r.variants.push(VariantRecord {
            name: name.into(),
            status: "ok".into(),
            aa: true,
            ..VariantRecord::default()
        });
        let mut c = r.cells[0].clone();
        c.variant = name.into();
        r.cells.push(c);
        let differs = matches!(verdict, Verdict::Faster | Verdict::Slower);
        r.comparisons[0].suspect = differs;
        r.comparisons.push(ComparisonRecord {
            workload: "get90|set10".into(),
            connections: 16,
            variant: name.into(),
            baseline: "gcc-O2".into(),
            cross_kind: false,
            ratio: 0.962,
            ci95: [0.95, 0.975],
            detectable: Some(0.013),
            verdict,
            aa: true,
            ..Default::default()
        });
        r.aa = Some(AaRecord {
            variant: name.into(),
            baseline: "gcc-O2".into(),
            workload: "get90|set10".into(),
            connections: 16,
            ratio: 0.962,
            ci95: [0.95, 0.975],
            verdict,
            detectable: Some(0.013),
            comparisons: 1,
            differ: usize::from(differs),
        });
        r
    }

    fn outputs(r: &Results) -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = crate::exporters()
            .iter()
            .map(|e| {
                (
                    e.file_name(),
                    String::from_utf8_lossy(&e.render(r)).into_owned(),
                )
            })
            .collect();
        out.push(("terminal", crate::terminal(r, false)));
        out
    }

    /// A check that differs: the machine check and the suspect mark in every output
    /// that shows verdicts, the A/A rows flagged in the CSV.
    #[test]
    fn a_differing_check_shows_in_every_output() {
        let r = with_aa(Verdict::Slower);
        for (file, text) in outputs(&r) {
            match file {
                "results.csv" => {
                    let rows: Vec<&str> = text.lines().collect();
                    assert!(rows[0].ends_with(",aa,suspect"), "{}", rows[0]);
                    assert!(
                        rows.iter()
                            .any(|l| l.contains("gcc-O2~aa") && l.ends_with(",true,true")),
                        "{text}"
                    );
                }
                "results.json" => {
                    assert!(text.contains("\"aa\"") && text.contains("\"suspect\": true"));
                }
                "bench.txt" => {}
                _ => {
                    assert!(text.contains("Machine check (A/A): FAILED"), "{file}");
                    assert!(text.contains("(suspect: A/A)"), "{file}");
                    assert!(text.contains("(A/A check)"), "{file}");
                    assert!(text.contains("A/A machine check"), "{file}");
                }
            }
        }
    }

    /// A check where the load set the pace: no answer, and no verdict marked.
    #[test]
    fn a_client_bound_check_is_no_answer() {
        let r = with_aa(Verdict::ClientBound);
        let line = super::sentence(&r).unwrap();
        assert!(
            line.starts_with("Machine check (A/A): no answer."),
            "{line}"
        );
        assert!(r.comparisons.iter().all(|k| !k.suspect));
    }

    /// A check on a busy machine: no answer, said as the machine's, never a load advice.
    #[test]
    fn a_machine_busy_check_is_no_answer_about_the_machine() {
        let r = with_aa(Verdict::MachineBusy);
        let line = super::sentence(&r).unwrap();
        assert!(
            line.starts_with("Machine check (A/A): no answer.") && line.contains("busy"),
            "{line}"
        );
        assert!(!line.contains("client threads"), "{line}");
        assert!(r.comparisons.iter().all(|k| !k.suspect));
    }

    /// A check that came out inconclusive: shown as passed with its noise floor, and no
    /// verdict marked.
    #[test]
    fn a_passing_check_marks_no_verdict() {
        let r = with_aa(Verdict::Inconclusive);
        for (file, text) in outputs(&r) {
            if file == "results.csv" {
                assert!(
                    text.lines().skip(1).all(|l| l.ends_with(",false")),
                    "{text}"
                );
                continue;
            }
            assert!(!text.contains("suspect"), "{file}");
            if matches!(file, "report.md" | "report.html" | "terminal") {
                assert!(text.contains("Machine check (A/A): passed"), "{file}");
                assert!(text.contains("noise floor at this budget: ±1.3%"), "{file}");
            }
        }
    }
}
