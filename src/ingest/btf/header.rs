//! Header lines (`#key value`) and the rows of the `#-` table blocks that numeric-mode
//! lines are resolved through.
use super::*;

impl BtfReader<'_> {
    pub(super) fn header(&mut self, rest: &str, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        if let Some(row) = rest.strip_prefix('-') {
            if self.block != Block::None {
                return self.table_row(row.trim(), pos, sink);
            }
            return Ok(()); // a `#-` line outside a block: a comment
        }
        self.block = Block::None;
        if rest.starts_with(char::is_whitespace) || rest.is_empty() {
            return Ok(()); // `# comment`
        }
        let (key, value) = match rest.split_once(char::is_whitespace) {
            Some((k, v)) => (k, v.trim()),
            None => (rest, ""),
        };
        let key = key.to_ascii_lowercase();
        match key.as_str() {
            // `#typeTable` is BTF 2.1.5's name for the block earlier files call `#entityType`.
            "entitytype" | "typetable" => self.block = Block::EntityType,
            "entitytable" => self.block = Block::EntityTable,
            "entitytypetable" => self.block = Block::EntityTypeTable,
            "timescale" => {
                let unit = TimeUnit::parse(value).ok_or_else(|| {
                    Error::input(
                        self.path,
                        pos.to_string(),
                        format!("unknown #timeScale '{value}' (expected ps, ns, us, ms or s)"),
                    )
                })?;
                if unit != self.unit && self.last_ts.is_some() {
                    sink.diagnostic(Diagnostic {
                        severity: Severity::Warning,
                        kind: "timescale_changed",
                        pos,
                        ts: self.last_ts,
                        message: format!(
                            "#timeScale changes from {} to {} after events; later lines use {}",
                            self.unit.as_str(),
                            unit.as_str(),
                            unit.as_str()
                        ),
                    })?;
                }
                self.unit = unit;
                sink.time_unit(unit);
                sink.meta(&key, value);
            }
            "creator" => {
                // The logger, and the synthetic generator of its repository (BTFViewer's
                // `synthetic_trace_gen`), which writes the same labels.
                let creator = value.to_ascii_lowercase();
                self.freertos = creator.starts_with("freertos trace logger")
                    || creator.starts_with("synthetic_trace_gen");
                sink.meta(&key, value);
            }
            _ => sink.meta(&key, value),
        }
        Ok(())
    }

    pub(super) fn table_row(&mut self, row: &str, pos: Pos, sink: &mut dyn Sink) -> Result<()> {
        let (first, second) = match row.split_once(char::is_whitespace) {
            Some((f, s)) => (f, s.trim()),
            None => (row, ""),
        };
        let bad = |what: &str| Diagnostic {
            severity: Severity::Warning,
            kind: "malformed_header",
            pos,
            ts: None,
            message: format!("{what} row '#-{row}' not understood; ignored"),
        };
        match self.block {
            Block::EntityType => match parse_int(first) {
                Some(id) if !second.is_empty() => {
                    self.type_ids.insert(id, second.into());
                    sink.meta(&format!("entitytype.{first}"), second);
                }
                _ => sink.diagnostic(bad("#entityType"))?,
            },
            Block::EntityTable => match parse_int(first) {
                Some(id) if !second.is_empty() => {
                    self.entity_ids.insert(id, second.into());
                    sink.declare_entity(second, None, Some(id));
                }
                _ => sink.diagnostic(bad("#entityTable"))?,
            },
            Block::EntityTypeTable => {
                if second.is_empty() {
                    sink.diagnostic(bad("#entityTypeTable"))?;
                } else {
                    sink.declare_entity(second, Some(first), None);
                }
            }
            Block::None => {}
        }
        Ok(())
    }
}
