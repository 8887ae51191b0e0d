//! JUnit XML as CI systems ingest it (GitLab, Jenkins, GitHub test
//! reporters), written by `quick-junit` (nextest's own writer): one
//! `<testsuite>` per agent, one `<testcase>` per recording named
//! `<agent>/<version>/<scenario>`, a failing case's explanation as its
//! `<failure>` text (an unreadable recording or scenario as `<error>`), and a
//! known limitation that holds as a pass with its reason in `system-out`.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::judging::judge::{Case, Status};

/// The document for `cases` (sorted as given).
pub fn render(cases: &[Case]) -> String {
    let mut report = Report::new("acp-harness check");
    let mut agents: Vec<&str> = cases.iter().map(|c| c.id.agent.as_str()).collect();
    agents.dedup();
    for agent in agents {
        let mut suite = TestSuite::new(xml_safe(agent));
        for c in cases.iter().filter(|c| c.id.agent == agent) {
            suite.add_test_case(test_case(c));
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- the JUnit report could not be written: {e} -->\n"))
}

fn test_case(c: &Case) -> TestCase {
    let statuses = c.statuses();
    let text = xml_safe(c.report().trim_end());
    let status = if c.passed() {
        TestCaseStatus::success()
    } else {
        let labels: Vec<&str> = statuses.iter().map(|s| s.label()).collect();
        let kind = if statuses.contains(&Status::Error) {
            NonSuccessKind::Error
        } else {
            NonSuccessKind::Failure
        };
        let mut status = TestCaseStatus::non_success(kind);
        status
            .set_message(labels.join(", "))
            .set_type(labels.first().copied().unwrap_or("failure"))
            .set_description(text.clone());
        status
    };
    let mut case = TestCase::new(xml_safe(&c.id.trial_name()), status);
    case.set_classname(xml_safe(&format!("acp-harness.{}", c.id.agent)));
    if c.passed() && statuses == [Status::KnownLimitation] {
        case.set_system_out(text);
    }
    case
}

/// `s` without the characters XML 1.0 cannot hold (control characters but
/// tab and line ends, U+FFFE, U+FFFF); the writer escapes the rest.
pub fn xml_safe(s: &str) -> String {
    s.chars()
        .filter(|&c| {
            matches!(c, '\t' | '\n' | '\r')
                || (c as u32 >= 0x20 && c != '\u{FFFE}' && c != '\u{FFFF}')
        })
        .collect()
}
