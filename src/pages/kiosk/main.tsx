import "../shared/base.css";
document.getElementById("app")!.textContent = "…";
