"""What the memory page shows about a space as a whole: counts, stages, jobs, usage audit."""
