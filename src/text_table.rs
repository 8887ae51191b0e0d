//! Plain-text tables for people: columns padded to their widest cell (in
//! characters), two spaces between, a rule of dashes under the headers, no
//! trailing blanks. The commands' table formats share it so they line up alike.

/// Columns padded to their widest cell, a rule under the headers.
pub fn render<const N: usize>(headers: [&str; N], rows: &[[String; N]]) -> String {
    let mut widths = headers.map(str::len);
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: [&str; N]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(headers);
    out.push_str(&line(
        widths.map(|w| "-".repeat(w)).each_ref().map(String::as_str),
    ));
    for row in rows {
        out.push_str(&line(row.each_ref().map(String::as_str)));
    }
    out
}
