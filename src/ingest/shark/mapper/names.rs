//! Text of a record for events and messages: its code's name, its parameters, and the
//! family a filter code stands for.
use super::*;

/// `par1=3 par2=7` (`par2=stale` in the fast variant).
pub(super) fn pars(r: &Rec) -> String {
    match r.par2() {
        Some(p) => format!("par1={} par2={p}", r.par1),
        None => format!("par1={} par2=stale", r.par1),
    }
}

/// The name of a record's code (`code_0x0C` for one FTrace.h does not define).
pub(super) fn action_of(r: &Rec) -> String {
    record::name(r.code()).map_or_else(|| format!("code_0x{:02X}", r.code()), str::to_string)
}

/// The family a filter code stands for, as FTrace.h names its `FTrace_filter_*` codes.
pub(super) fn family_name(fam: usize) -> &'static str {
    const NAMES: [&str; 12] = [
        "general",
        "ipoint",
        "task",
        "interrupt",
        "CPU",
        "priority",
        "mutex",
        "signal",
        "server",
        "user",
        "data",
        "timer",
    ];
    NAMES.get(fam).copied().unwrap_or("unnamed")
}
