//! Every model request in the committed corpus is one the scripted model
//! server places today: a scripted turn of the recording's scenario or a
//! side request its agent's profile declares, never off the script. The
//! requests are the agents' own (real prompt shapes, reminders, tool
//! results, title and router calls), so this pins prompt finding and the
//! profiles' side-request declarations against what agents really send.
//! And every recording that ended `ok` asked for each scripted reply its
//! scenario needs (what the recorder now ends `incomplete` otherwise).
//!
//! Recordings made from another revision of their scenario (its hash in the
//! header differs) are left out: their prompts may have changed since.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use acp_harness::capture::model_server::{Flavour, ModelScript, Placement, SideRequests, place};
use acp_harness::corpus::profile::Profile;
use acp_harness::corpus::recording::{self, Dir, Leg};
use acp_harness::corpus::scenario::{self, Scenario};
use axum::http::Method;

fn recordings(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root.join("recordings"))
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    out.sort();
    out
}

fn every_recorded_model_request_is_a_scripted_turn_or_a_declared_side_request_and_ok_runs_asked_for_every_needed_reply()
 {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenarios: BTreeMap<String, Scenario> = scenario::load_all(root.join("scenarios"))
        .unwrap()
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect();
    let mut profiles: BTreeMap<String, Option<(Flavour, SideRequests, bool)>> = BTreeMap::new();
    let (mut checked, mut requests, mut sides, mut quoted_prompts) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for file in recordings(root) {
        let rel = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        // Screenshot recordings are large; their requests are the
        // unity-call-allowed shape with an image, which other scenarios of the
        // same agents cover except for the image itself.
        if rel.ends_with("/screenshot.jsonl") {
            continue;
        }
        let rec = recording::read(&file).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let h = &rec.header;
        if h.synthetic || h.model_mode != "stub" {
            continue;
        }
        let Some(scenario) = scenarios.get(&h.scenario) else {
            continue;
        };
        if h.scenario_sha256 != scenario.sha256
            && h.scenario_sha256 != scenario.sha256_with_expectations
        {
            eprintln!("{rel}: made from another revision of its scenario; left out");
            continue;
        }
        let Some((flavour, side, asks_model)) = profiles
            .entry(h.agent.clone())
            .or_insert_with(|| {
                let p = match Profile::find(root, &h.agent) {
                    Ok(p) => p,
                    Err(acp_harness::corpus::profile::ProfileError::Unknown { .. }) => return None,
                    Err(e) => panic!("{e}"),
                };
                let flavour: Flavour =
                    serde_json::from_value(serde_json::Value::String(p.model.flavour.clone()))
                        .ok()?;
                let side: SideRequests = p
                    .model
                    .side_requests
                    .clone()
                    .try_into()
                    .unwrap_or_else(|e| panic!("{}: {e}", h.agent));
                Some((flavour, side, p.model.asks_model))
            })
            .as_ref()
        else {
            continue;
        };
        let script = ModelScript::from_scenario(scenario);
        let mut served = std::collections::BTreeSet::new();
        checked += 1;
        for e in rec.leg(Leg::Model).filter(|e| e.dir == Dir::Request) {
            let Some(http) = &e.http else { continue };
            let method =
                Method::from_bytes(http.method.as_deref().unwrap_or("POST").as_bytes()).unwrap();
            let full = http.path.as_deref().unwrap_or("/");
            let path = full.split('?').next().unwrap_or(full);
            match place(*flavour, &script, side, &method, path, e.raw.as_bytes()) {
                Placement::Turn {
                    turn,
                    reply,
                    quoted,
                    ..
                } => {
                    requests += 1;
                    served.insert((turn, reply));
                    if quoted {
                        quoted_prompts += 1;
                    }
                }
                Placement::Side(..) => sides += 1,
                Placement::Auxiliary(_) | Placement::NoEndpoint => {}
                Placement::Unreadable(why) => {
                    problems.push(format!("{rel} seq {}: unreadable: {why}", e.seq))
                }
                Placement::OffScript { why, .. } => {
                    problems.push(format!("{rel} seq {} ({full}): {why}", e.seq))
                }
            }
        }
        // a run that ended ok played its whole script (the recorder ends it
        // `incomplete` otherwise), unless its agent never asks a model
        let ended_ok = rec
            .trailer
            .as_ref()
            .is_some_and(|t| t.outcome == recording::Outcome::Ok);
        if ended_ok && *asks_model {
            for r in script.unrequested(&served) {
                problems.push(format!("{rel}: never asked for {r}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} recorded model request(s) the model server would now answer off script, or scripted replies an ok recording never asked for:\n{}",
        problems.len(),
        problems.join("\n")
    );
    eprintln!(
        "{checked} recordings: {requests} turn requests ({quoted_prompts} with the prompt inside framing text), {sides} side requests"
    );
    assert!(checked > 50, "only {checked} recordings checked");
    assert!(
        requests > 100 && sides > 5,
        "{requests} turns, {sides} side requests"
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(corpus_model_script: every_recorded_model_request_is_a_scripted_turn_or_a_declared_side_request_and_ok_runs_asked_for_every_needed_reply)
}
