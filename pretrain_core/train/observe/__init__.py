"""What a run measures: metrics, progress lines, health alarms, hardware and MFU, gradient and coordinate checks."""
