"""What a person looks at: figures, Jupyter widgets and the dashboard app."""
