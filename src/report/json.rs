//! The JSON form: every figure of the report, for machines (durations in ns, loads 0..1).
//! Whole numbers are written as integers (`351`, not `351.0`), as `tracedb query` does.
use super::Report;
use serde_json::Value;

/// The report as pretty-printed JSON.
pub fn render(r: &Report) -> String {
    let mut v = serde_json::to_value(r).unwrap_or_else(|e| Value::String(format!("internal: {e}")));
    integral(&mut v);
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

/// Rewrites floats without a fractional part as integers, in place.
fn integral(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) =
                n.as_f64().filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15)
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(integral),
        Value::Object(m) => m.values_mut().for_each(integral),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn whole_floats_become_integers() {
        let mut v = serde_json::json!({"a": 351.0, "b": [3460.6, -2.0], "c": "x"});
        super::integral(&mut v);
        assert_eq!(v.to_string(), r#"{"a":351,"b":[3460.6,-2],"c":"x"}"#);
    }
}
