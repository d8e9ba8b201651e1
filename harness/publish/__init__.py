"""What goes to the Hub: model and dataset cards (`cards`) and the uploads (`hub`)."""
