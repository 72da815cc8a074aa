//! Job names as the command line gives them (`fikit-profile --name`,
//! `fikit-sim import --name`): the trace's `fikit.job_name`.

/// A job name that is not empty (surrounding white space is not a name),
/// as given.
pub fn parse_job_name(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("a job name cannot be empty".to_string())
    } else {
        Ok(s.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::parse_job_name;

    #[test]
    fn a_name_is_kept_as_given_and_an_empty_one_refused() {
        assert_eq!(parse_job_name("resnet50 b1").unwrap(), "resnet50 b1");
        assert!(parse_job_name("").is_err());
        assert!(parse_job_name("  ").is_err());
    }
}
