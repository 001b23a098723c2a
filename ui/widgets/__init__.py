"""What every view shares: confirmation questions, verdict colours, theme, screen fit, saved
window state, report export."""
