//! What every benchmark reports with: the machine's load, a monotonic clock
//! two processes share, percentiles and knobs from the environment. Each
//! bench includes this file as a module and uses the part it needs.

/// Nanoseconds on CLOCK_MONOTONIC: the same clock in the writing and the
/// reading process, so a frame's stamp and its arrival compare directly.
#[cfg(unix)]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds on the performance counter, which Windows keeps system-wide
/// (the same in every process), as CLOCK_MONOTONIC on Unix.
#[cfg(windows)]
pub fn monotonic_ns() -> u64 {
    use windows::Win32::System::Performance::{QueryPerformanceCounter, QueryPerformanceFrequency};
    let (mut count, mut per_second) = (0i64, 0i64);
    // SAFETY: both write into integers we own.
    unsafe {
        let _ = QueryPerformanceCounter(&mut count);
        let _ = QueryPerformanceFrequency(&mut per_second);
    }
    (count as u128 * 1_000_000_000 / per_second.max(1) as u128) as u64
}

/// A numeric knob from the environment, or its default.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `p` percentile (0..=1) of sorted nanoseconds, in microseconds.
pub fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1e3
}

/// The median of figures (NaN, a failed run's, left out).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| !x.is_nan());
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The load averages (1, 5, 15 min) printed with each figure: a busy
/// machine explains a slow one.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
