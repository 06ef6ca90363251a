"""The Inbox pane: questions to answer, suggestions to review, flags to triage."""
