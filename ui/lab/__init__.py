"""The Training lab: runs in their own threads (runs) and their marks kept in the browser (marks)."""
