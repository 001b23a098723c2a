; Inno Setup 6 script: StorWatt installer for Windows lab PCs.
;
; Built by .github/workflows/windows-installer.yml after PyInstaller has made dist\storwatt\:
;   iscc /DAppVersion=0.1.0 /DNumericVersion=0.1.0.0 [/DFioExe=C:\path\fio.exe] packaging\windows\storwatt.iss
; Output: dist\storwatt-<version>-windows-x64-setup.exe
;
; The optional "fio" component installs a fio.exe next to storwatt.exe (only offered when the
; build was given /DFioExe=...); without it, real IO runs need fio on PATH (docs/install.md).

#ifndef AppVersion
  #error Pass /DAppVersion=<app.__version__> to iscc
#endif
#ifndef NumericVersion
  #define NumericVersion "0.0.0.0"
#endif
#define SourceRoot AddBackslash(SourcePath) + "..\.."

[Setup]
; AppId identifies the product across upgrades: never change it.
AppId={{6F0C7D0E-5B7A-4D7C-9E43-2B1F5A0C8E21}
AppName=StorWatt
AppVersion={#AppVersion}
AppVerName=StorWatt {#AppVersion}
VersionInfoVersion={#NumericVersion}
AppPublisher=StorWatt
DefaultDirName={autopf}\StorWatt
DefaultGroupName=StorWatt
DisableProgramGroupPage=yes
; Per-machine install (lab PCs are shared); the user data stays in %LOCALAPPDATA%\StorWatt.
PrivilegesRequired=admin
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#SourceRoot}\dist
OutputBaseFilename=storwatt-{#AppVersion}-windows-x64-setup
SetupIconFile={#SourceRoot}\resources\icons\storwatt.ico
UninstallDisplayIcon={app}\storwatt-gui.exe
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
ChangesEnvironment=yes

[Types]
Name: "full"; Description: "StorWatt with fio"
Name: "compact"; Description: "StorWatt only"
Name: "custom"; Description: "Custom"; Flags: iscustom

[Components]
Name: "main"; Description: "StorWatt station (GUI, command line, reports)"; Types: full compact custom; Flags: fixed
#ifdef FioExe
Name: "fio"; Description: "fio (IO workload generator for real IO runs)"; Types: full
#endif

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Add the 'storwatt' and 'storwatt-verify' commands to PATH"; Flags: unchecked

[Files]
; The whole one-folder bundle — storwatt.exe, storwatt-gui.exe and storwatt-verify.exe (the
; standalone result-bundle verifier, its source in _internal\verifier) —; stale files of an
; older version are removed first ([InstallDelete]).
Source: "{#SourceRoot}\dist\storwatt\*"; DestDir: "{app}"; Components: main; Flags: ignoreversion recursesubdirs createallsubdirs
#ifdef FioExe
Source: "{#FioExe}"; DestDir: "{app}"; DestName: "fio.exe"; Components: fio; Flags: ignoreversion
#endif

[InstallDelete]
Type: filesandordirs; Name: "{app}\_internal"

[Icons]
; cmd /k drops the outermost pair of quotes of a line with more than two, hence the extra pair.
Name: "{group}\StorWatt"; Filename: "{app}\storwatt-gui.exe"; Comment: "Storage power-efficiency test station"
Name: "{group}\StorWatt self-test"; Filename: "{cmd}"; Parameters: "/k """"{app}\storwatt.exe"" --self-test"""; WorkingDir: "{userdocs}"; IconFilename: "{app}\storwatt.exe"
Name: "{group}\StorWatt verify a result bundle"; Filename: "{cmd}"; Parameters: "/k """"{app}\storwatt-verify.exe"" --help"""; WorkingDir: "{userdocs}"; IconFilename: "{app}\storwatt.exe"
Name: "{group}\Uninstall StorWatt"; Filename: "{uninstallexe}"
Name: "{autodesktop}\StorWatt"; Filename: "{app}\storwatt-gui.exe"; Tasks: desktopicon

[Registry]
Root: HKLM; Subkey: "SYSTEM\CurrentControlSet\Control\Session Manager\Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NeedsAddPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\storwatt-gui.exe"; Description: "Start StorWatt"; Flags: nowait postinstall skipifsilent

[Code]
const
  EnvironmentKey = 'SYSTEM\CurrentControlSet\Control\Session Manager\Environment';

{ True unless the folder is already on the machine PATH (re-install must not append twice). }
function NeedsAddPath(Folder: string): Boolean;
var
  Current: string;
begin
  if not RegQueryStringValue(HKLM, EnvironmentKey, 'Path', Current) then
  begin
    Result := True;
    exit;
  end;
  Result := Pos(';' + Uppercase(Folder) + ';', ';' + Uppercase(Current) + ';') = 0;
end;

{ The machine PATH without the entries naming Folder (case-insensitive, a trailing backslash
  ignored); every other entry is kept as it was, empty ones and their order included. }
function WithoutPathEntry(Path, Folder: string): string;
var
  Rest, Entry: string;
  P: Integer;
  First: Boolean;
begin
  Result := '';
  First := True;
  Rest := Path + ';';
  while Rest <> '' do
  begin
    P := Pos(';', Rest);
    Entry := Copy(Rest, 1, P - 1);
    Rest := Copy(Rest, P + 1, Length(Rest));
    if CompareText(RemoveBackslashUnlessRoot(Trim(Entry)), RemoveBackslashUnlessRoot(Folder)) <> 0 then
    begin
      if not First then
        Result := Result + ';';
      Result := Result + Entry;
      First := False;
    end;
  end;
end;

{ Uninstalling takes out the PATH entry the "addtopath" task added (the [Registry] line above
  only appends; Inno Setup does not undo an appended value). }
procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var
  Current, Folder: string;
begin
  if CurUninstallStep <> usUninstall then
    exit;
  Folder := ExpandConstant('{app}');
  if RegQueryStringValue(HKLM, EnvironmentKey, 'Path', Current) then
    if not NeedsAddPath(Folder) then
      RegWriteExpandStringValue(HKLM, EnvironmentKey, 'Path', WithoutPathEntry(Current, Folder));
end;
