use super::*;

#[test]
fn only_the_reply_to_our_own_request_is_recognised() {
    let cases = [
        (
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"acp-bridge-print-init","response":{}}}"#,
            true,
        ),
        (
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{}}}"#,
            false,
        ),
        (
            r#"{"type":"user","message":{"content":"acp-bridge-print-init \"control_response\""}}"#,
            false,
        ),
        (r#"{"type":"control_response", broken"#, false),
    ];
    for (line, want) in cases {
        assert_eq!(is_reply_to(line, PRINT_INIT_ID), want, "{line}");
    }
}
