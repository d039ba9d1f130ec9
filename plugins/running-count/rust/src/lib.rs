//! running-count (Rust): sets the field "count" of each record to the
//! number of records its subtask has seen, kept as operator state
//! (`Plugin::OPERATOR_STATE`: 8 little-endian bytes), as the Go plugin
//! (plugins/running-count/main.go).

use sluice::{Context, Edit, Error, Map, Plugin, Record, Value};

pub struct RunningCount {
    n: i64,
}

impl Plugin for RunningCount {
    const NAME: &'static str = "running-count";
    const OPERATOR_STATE: bool = true;
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(RunningCount { n: 0 })
    }
    fn snapshot(&self) -> Result<Vec<u8>, Error> {
        Ok(self.n.to_le_bytes().to_vec())
    }
    fn restore(&mut self, state: &[u8]) -> Result<(), Error> {
        let mut b = [0u8; 8];
        if state.len() != 8 {
            return Err(Error::malformed("a count snapshot has 8 bytes"));
        }
        b.copy_from_slice(state);
        self.n += i64::from_le_bytes(b);
        Ok(())
    }
}

impl Map for RunningCount {
    fn map(&mut self, _: &Record, out: &mut Edit) -> Result<(), Error> {
        self.n += 1;
        out.set_int("count", self.n);
        Ok(())
    }
}

sluice::map!(RunningCount);
