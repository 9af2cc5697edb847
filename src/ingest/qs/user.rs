//! Application (user) records: a timestamp, then self-described arguments.
use super::decode::{self, Arg, Cursor};
use super::frame::Frame;
use super::reader::{hex_bytes, Reader};
use crate::ingest::Severity;
use crate::Result;

impl Reader<'_> {
    /// An application record: timestamp, then self-described arguments.
    pub(super) fn user(&mut self, f: &Frame) -> Result<()> {
        let cfg = self.cfg;
        let rec = f.rec();
        let mut c = Cursor::new(f.payload());
        let (args, err) = match c.uint(cfg.tstamp) {
            Some(t) => {
                self.time(t, f)?;
                decode::user_args(&mut c, &cfg)
            }
            None => {
                // What there is would be read again as arguments: made-up values.
                let m = format!(
                    "user record {rec} has no room for its {}-byte timestamp (payload: {}): no \
                     arguments are read",
                    cfg.tstamp,
                    if f.payload().is_empty() { "none".into() } else { hex_bytes(f.payload()) }
                );
                self.diag(f, Severity::Warning, "truncated_record", m)?;
                (Vec::new(), None)
            }
        };
        let action = match self.usr.get(&rec).or_else(|| self.dic_usr.get(&rec)) {
            Some(n) => n.clone(),
            None => format!("USER_{rec}"),
        };
        if let Some(e) = err {
            let m = format!("{action}: {e}; the arguments before it are kept");
            self.diag(f, Severity::Warning, "truncated_record", m)?;
        }
        let mut note = String::new();
        for a in &args {
            if !note.is_empty() {
                note.push(' ');
            }
            let s = match a {
                Arg::Int(i) => i.to_string(),
                Arg::Uint(u, true, n) => format!("0x{u:0w$X}", w = usize::from(*n) * 2),
                Arg::Uint(u, false, _) => u.to_string(),
                Arg::Enum(v, g) => self
                    .enums
                    .get(&(*g, u64::from(*v)))
                    .cloned()
                    .unwrap_or_else(|| format!("{v:03}")),
                Arg::Float(x) => x.to_string(),
                Arg::Str(s) => s.clone(),
                Arg::Mem(m) => hex_bytes(m),
                Arg::Sig(s, o) => {
                    let n = self.sig_name(*s, *o);
                    if *o != 0 {
                        format!("{n},Obj={}", self.obj_name(*o, f)?)
                    } else {
                        n
                    }
                }
                Arg::Obj(o) => self.obj_name(*o, f)?,
                Arg::Fun(p) => self.name(*p, true, f)?,
            };
            note.push_str(&s);
        }
        let value = args.iter().find_map(Arg::number);
        self.declare(&action, Some("USER"));
        self.own_event(&action, &action, &note, value, f)
    }
}
