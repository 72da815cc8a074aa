//! Job priorities as the command line gives them: `high`, `low` or a number
//! from 0 (highest) to [`MAX_PRIORITY`] (lowest), the range a trace's
//! `fikit.priority` takes.

/// The lowest priority; 0 is the highest.
pub const MAX_PRIORITY: u8 = 9;

/// A priority that is neither `high`, `low` nor a number from 0 to [`MAX_PRIORITY`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid priority {given:?}: use high (= 0), low (= 9) or a number from 0 (highest) to 9 (lowest)"
)]
pub struct PriorityError {
    /// What was given, as given.
    pub given: String,
}

/// Parses `high` (0), `low` ([`MAX_PRIORITY`]) or a number from 0 to
/// [`MAX_PRIORITY`], ignoring case and surrounding white space.
pub fn parse_priority(s: &str) -> Result<u8, PriorityError> {
    match s.trim().to_ascii_lowercase().as_str() {
        "high" => Ok(0),
        "low" => Ok(MAX_PRIORITY),
        other => match other.parse::<u8>() {
            Ok(n) if n <= MAX_PRIORITY => Ok(n),
            _ => Err(PriorityError {
                given: s.to_string(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(parse_priority("high"), Ok(0));
        assert_eq!(parse_priority(" LOW "), Ok(9));
        assert_eq!(parse_priority("0"), Ok(0));
        assert_eq!(parse_priority("9"), Ok(9));
        for bad in ["10", "-1", "medium", "", "3.5"] {
            assert!(parse_priority(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_error_names_what_was_given_and_the_range() {
        assert_eq!(
            parse_priority(" 10").unwrap_err().to_string(),
            "invalid priority \" 10\": use high (= 0), low (= 9) or a number from 0 (highest) \
             to 9 (lowest)"
        );
    }
}
