"""Two traces compared in the window: View → Compare with… (`compare`), side by side or overlaid (`compare_window`)."""
