"""The quality classifier the package ships: its training documents, its fit and its build command."""
