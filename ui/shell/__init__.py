"""The station's window around every view: main window, start page, station health, the Qt
check, stop signals."""
