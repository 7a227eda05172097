"""What people read: terminal summaries and figures of every command's results."""
